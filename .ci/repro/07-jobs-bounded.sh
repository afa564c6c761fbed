# Item 7: an absurd --jobs exhausted memory or failed making a channel
# after the lock, manifest and points were written. Every worker-count flag
# is bounded and checked before anything is written.
for j in 100000000000 9223372036854775807 0; do
  expect_fail '--jobs' "$RS" sweep --n 2 --seeds 1 --first 10 --jobs "$j" --out s
  [ ! -e s ] || fail "sweep --jobs $j left s/ behind"
  expect_fail '--jobs' "$RS" plan --n 1..2 --seeds 1 --first 10 --slo-ttft-p95 1000 --jobs "$j" --out p
  [ ! -e p ] || fail "plan --jobs $j left p/ behind"
  expect_fail '--jobs' "$RS" validate --jobs "$j" --out v
  [ ! -e v ] || fail "validate --jobs $j left v/ behind"
done
d=$REPO/testdata/mlenergy-h100-v3
expect_fail '--jobs' "$RS" calibrate --mlenergy "$d/runs.csv" --osl "$d/osl-qwen3-8b.json" --model Qwen3-8B --loo --jobs 9223372036854775807 --out c
[ ! -e c ] || fail "calibrate --jobs left c/ behind"
