#!/usr/bin/env bash
# The host-tier study (docs/host-tier-study.md): the sessions workload at
# growing concurrency, with and without a per-worker host KV tier, under
# round-robin and kv routing. Runs one `routesim sweep` per arm of arms.tsv
# into OUT/<arm>, then prints the table and draws the figure.
#
#   examples/host-tier-study/run.sh [OUT] [PNG]
#
# Sweeps resume: rerunning with the same OUT only redraws. Deterministic:
# the same commit gives the same table and the same PNG bytes.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-routesim-out/host-tier-study}
PNG=${2:-$OUT/host-tier-study.png}
BIN=${ROUTESIM:-$OUT/routesim}
mkdir -p "$OUT"
[ -n "${ROUTESIM:-}" ] || go build -o "$BIN" ./cmd/routesim

# The workload and grid every arm shares (the page explains each choice).
COMMON=(
  --workload sessions --n 4
  --system-tokens 1000 --starters 1000000 --starter-tokens 4000
  --turns 4..8 --new-tokens 300 --output-tokens 300 --think-time 10
  --duration 600 --warmup 120
  --concurrency 16,32,64,96,128,192,256
  --policy round-robin,kv --seeds 3 --jobs 1 --quiet
)

arms=()
while IFS=$'\t' read -r name flags; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  arms+=("$name")
  # shellcheck disable=SC2086 # an arm's flags are words by design
  "$BIN" sweep "${COMMON[@]}" $flags --out "$OUT/$name" >"$OUT/$name.log"
done <examples/host-tier-study/arms.tsv

go run ./examples/host-tier-study/report -png "$PNG" "${arms[@]/#/$OUT/}"
