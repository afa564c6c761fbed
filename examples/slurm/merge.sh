#!/usr/bin/env bash
# Join the shards of a routesim sweep into $OUT/merged once every array
# task succeeded (submit.sh makes this job depend on the array: afterok).
#SBATCH --job-name=routesim-merge
#SBATCH --cpus-per-task=1
#SBATCH --mem=1G
#SBATCH --time=00:15:00
set -euo pipefail
OUT=${OUT:-$PWD/routesim-sweep}
SHARDS=${SHARDS:-8}
shards=()
for ((i = 0; i < SHARDS; i++)); do
  test -d "$OUT/shard-$i" || { echo "missing $OUT/shard-$i: did every array task run?" >&2; exit 1; }
  shards+=("$OUT/shard-$i")
done
exec "${ROUTESIM:-routesim}" merge "$OUT/merged" "${shards[@]}"
