#!/usr/bin/env bash
# One shard of a routesim sweep: Slurm array task i runs shard i of
# $SHARDS into $OUT/shard-i. Submitted by submit.sh (which sets the array
# size, SHARDS, OUT, ROUTESIM and SWEEP_ARGS); a rerun resumes its points.
#SBATCH --job-name=routesim-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=01:00:00
set -euo pipefail
: "${SLURM_ARRAY_TASK_ID:?run as a Slurm array task (see submit.sh)}"
SHARDS=${SHARDS:-8}
OUT=${OUT:-$PWD/routesim-sweep}
# SWEEP_ARGS is a list of flags: word splitting is intended.
# shellcheck disable=SC2086
exec "${ROUTESIM:-routesim}" sweep ${SWEEP_ARGS:---n 2..32 --seeds 10} --quiet \
  --jobs "${SLURM_CPUS_PER_TASK:-1}" \
  --shard "${SLURM_ARRAY_TASK_ID}/${SHARDS}" --out "${OUT}/shard-${SLURM_ARRAY_TASK_ID}"
