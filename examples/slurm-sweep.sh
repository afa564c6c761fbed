#!/usr/bin/env bash
# Run one routesim sweep as a Slurm array: task i runs shard i of K into its
# own directory; a dependent job merges them (same bytes as an unsharded
# run). Not run in CI. Submit with:  sbatch examples/slurm-sweep.sh
#SBATCH --job-name=routesim-sweep
#SBATCH --array=0-7            # K = 8 shards
#SBATCH --cpus-per-task=2
#SBATCH --mem=1G
#SBATCH --time=00:30:00
set -euo pipefail
K=8
OUT=${OUT:-$PWD/routesim-sweep}
routesim sweep --n 2..32 --seeds 10 --quiet --jobs "${SLURM_CPUS_PER_TASK}" \
  --shard "${SLURM_ARRAY_TASK_ID}/${K}" --out "${OUT}/shard-${SLURM_ARRAY_TASK_ID}"
# The last task to finish need not merge; submit the merge as a dependent job:
#   sbatch --dependency=afterok:<array job id> --wrap "routesim merge ${OUT}/merged ${OUT}/shard-*"
