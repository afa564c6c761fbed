# Item 6: a positive --request-timeout-seconds below the clock's nanosecond
# meant "wait forever" (4e-10) while 5e-10 timed out everything. It is one
# nanosecond, the shortest timeout: every request times out, as with 1e-9.
run=("$RS" run --n 2 --first 20)
expect_ok "${run[@]}" --request-timeout-seconds 1e-9
grep -q ' 0 completed' stdout.txt || fail "a 1 ns timeout completed requests"
cp stdout.txt want.txt
for v in 4e-10 1e-300; do
  expect_ok "${run[@]}" --request-timeout-seconds "$v"
  cmp -s stdout.txt want.txt || fail "--request-timeout-seconds $v differs from 1e-9"
done
