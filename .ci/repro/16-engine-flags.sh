# Item 16: --max-num-seqs 9223372036854775807 reported a negative activation
# naming no flag; --max-num-batched-tokens -1 reported --max-num-seqs. Each
# engine flag is range-checked under its own name, overflow included.
for f in max-num-seqs max-num-batched-tokens max-model-len num-gpu-blocks-override kv-cache-tokens; do
  for v in 9223372036854775807 -1; do
    expect_fail "^routesim: --$f $v must be in" "$RS" run --$f "$v"
    [ "$(wc -l < stderr.txt)" -eq 1 ] || fail "--$f $v: more than one error: $(cat stderr.txt)"
  done
done
expect_fail '^routesim: --tp 0 must be in' "$RS" run --tp 0
expect_fail '^routesim: --gpu-memory-utilization NaN' "$RS" run --gpu-memory-utilization NaN
expect_ok "$RS" run --first 10 --max-num-seqs 64 --max-num-batched-tokens 4096
