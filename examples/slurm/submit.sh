#!/usr/bin/env bash
# Submit one routesim sweep to Slurm as an array of K shards plus a merge
# that runs only once every shard succeeded (afterok). Run from a login
# node with routesim on PATH (or ROUTESIM=/path/to/routesim):
#
#   SHARDS=8 OUT=$PWD/routesim-sweep examples/slurm/submit.sh
#   SWEEP_ARGS="--n 2..64 --seeds 10 --policy round-robin,kv" examples/slurm/submit.sh
#
# The merged sweep lands in $OUT/merged: the same bytes as an unsharded
# run. A shard that fails can be resubmitted alone
# (sbatch --array=<i> examples/slurm/sweep.sh); it resumes its points.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export SHARDS=${SHARDS:-8}
export OUT=${OUT:-$PWD/routesim-sweep}
export ROUTESIM=${ROUTESIM:-routesim}
export SWEEP_ARGS=${SWEEP_ARGS:---n 2..32 --seeds 10}
case $SHARDS in '' | *[!0-9]* | 0) echo "SHARDS must be a positive integer, got '$SHARDS'" >&2; exit 2 ;; esac
mkdir -p "$OUT"
array=$(sbatch --parsable --array="0-$((SHARDS - 1))" --output="$OUT/slurm-%A_%a.out" "$here/sweep.sh")
array=${array%%;*} # --parsable prints "jobid[;cluster]"
merge=$(sbatch --parsable --dependency="afterok:$array" --output="$OUT/slurm-merge-%j.out" "$here/merge.sh")
echo "sweep array job $array ($SHARDS shards into $OUT/shard-*), merge job ${merge%%;*} into $OUT/merged"
