# Item 15: --kv-event-lag 2562047h failed inside the run ("an event fell at
# -9.22337e+09 s"), naming no flag. Every duration flag is range-checked at
# parse time, naming itself.
expect_fail '^routesim: --kv-event-lag 2562047h0m0s must be in' "$RS" run --policy kv --kv-event-lag 2562047h
expect_fail '^routesim: --metrics-lag' "$RS" run --policy llm-d --metrics-lag 2562047h
expect_fail '^routesim: --retry-backoff' "$RS" run --retry 3 --retry-backoff 2562047h
expect_fail '^routesim: --retry-backoff' "$RS" run --retry-backoff -1s
expect_fail '^routesim: --refresh-metrics-interval' "$RS" run --policy llm-d --refresh-metrics-interval 2562047h
expect_fail '^routesim: --kv-event-lag' "$RS" sweep --n 2 --first 10 --kv-event-lag 2562047h --out s
[ ! -e s ] || fail "sweep --kv-event-lag left s/ behind"
! grep -q -- '-9.2' stderr.txt || fail "a wrapped time is shown"
