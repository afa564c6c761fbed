# 08: run --policy kv --prefill-load-scale 1e306 answered "policy chose
# worker -1 of 2" (also kv-admission, kv-backpressure, plan --setting): the
# costs overflowed to +Inf and argmin found no worker. Every numeric policy
# parameter now has a bound in the registry (run, sweep and plan --setting
# all check it), and a KV policy whose costs overflow still dispatches.
for p in kv kv-admission kv-backpressure; do
  expect_fail '--prefill-load-scale 1e\+306 must be at most 1e\+06' "$RS" run --policy "$p" --prefill-load-scale 1e306 --n 2 --first 20
done
expect_fail '--overlap-score-credit 1e\+300 must be at most' "$RS" run --policy kv --overlap-score-credit 1e300 --n 2 --first 20
expect_fail '--router-temperature 1e\+300 must be at most' "$RS" run --policy kv --router-temperature 1e300 --n 2 --first 20
expect_fail 'prefill.load.scale.*1e\+306 must be at most' "$RS" sweep --policy kv --prefill-load-scale 1e306 --n 2 --first 20 --out sw
expect_fail 'prefill-load-scale=1e306.*1e\+306 must be at most' "$RS" plan --policy kv --setting prefill-load-scale=1,1e306 --slo-ttft-p95 5000 --n 2 --first 20 --out pl
[ ! -e sw ] && [ ! -e pl ] || fail "a refused sweep or plan left an output directory"
# At the bound the policy still routes: a run completes.
expect_ok "$RS" run --policy kv-admission --prefill-load-scale 1e6 --overlap-score-credit 1e6 --n 2 --first 20
