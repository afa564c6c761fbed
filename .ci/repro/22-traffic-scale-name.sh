# Item 22: plan --traffic-scale 1e308 named --rate-scale, a flag the user
# did not give. The error names --traffic-scale.
plan=("$RS" plan --n 1..2 --seeds 1 --first 10 --slo-ttft-p95 1000 --quiet --out p)
for x in 1e308 1e-300; do
  expect_fail '^routesim: --traffic-scale' "${plan[@]}" --traffic-scale "$x"
  ! grep -q -- '--rate-scale' stderr.txt || fail "--traffic-scale $x: the error names --rate-scale"
done
[ ! -e p ] || fail "a refused plan left p/ behind"
