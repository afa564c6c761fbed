#!/usr/bin/env bash
# The host-tier study (docs/host-tier-study.md): closed-loop sessions at
# growing concurrency, with and without a per-worker host KV tier, under
# round-robin, Dynamo's kv router and session affinity. For each workload of
# workloads.tsv and each arm of arms.tsv it runs one `routesim sweep` into
# OUT/<workload>/<arm>, then writes OUT/<workload>.md (the table) and
# IMG/host-tier-<workload>.png (the figure).
#
#   examples/host-tier-study/run.sh [OUT] [IMG]
#
# ROUTESIM=path uses a built binary instead of building one. Sweeps resume:
# rerunning with the same OUT only redraws. Deterministic: the same commit
# gives the same tables and the same PNG bytes.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-routesim-out/host-tier-study}
IMG=${2:-$OUT}
BIN=${ROUTESIM:-$OUT/routesim}
mkdir -p "$OUT" "$IMG"
[ -n "${ROUTESIM:-}" ] || go build -o "$BIN" ./cmd/routesim

# The grid every workload and arm shares.
COMMON=(
  --workload sessions --n 4 --duration 600 --warmup 120
  --concurrency 16,32,64,96,128,192,256
  --policy round-robin,kv,session-affinity --seeds 3 --jobs 1 --quiet
)

rows() { grep -v '^#' "examples/host-tier-study/$1" | grep -v '^[[:space:]]*$'; }

while IFS=$'\t' read -r wl wflags; do
  dirs=()
  while IFS=$'\t' read -r arm aflags; do
    dirs+=("$OUT/$wl/$arm")
    # shellcheck disable=SC2086 # an arm's and a workload's flags are words by design
    "$BIN" sweep "${COMMON[@]}" $wflags $aflags --out "$OUT/$wl/$arm" >"$OUT/$wl-$arm.log"
  done < <(rows arms.tsv)
  go run ./examples/host-tier-study/report -title "$wl" -png "$IMG/host-tier-$wl.png" "${dirs[@]}" >"$OUT/$wl.md"
  echo "wrote $OUT/$wl.md and $IMG/host-tier-$wl.png"
done < <(rows workloads.tsv)
