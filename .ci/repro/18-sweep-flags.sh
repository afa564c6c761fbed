# Item 18: sweep --slo-ttft NaN failed only while writing manifest.json;
# --policy= exited 0 with zero points; --cache-threshold with round-robin
# only was accepted (run refuses it). All three fail at parse time, naming
# the flag, with nothing written.
sweep=("$RS" sweep --n 2 --seeds 1 --first 10 --quiet --out s)
expect_fail '^routesim: --slo-ttft NaN' "${sweep[@]}" --metric goodput --slo-ttft NaN
expect_fail '^routesim: --slo-ttft' "${sweep[@]}" --slo-ttft 500
expect_fail '^routesim: --policy' "${sweep[@]}" --policy=
expect_fail '^routesim: --cache-threshold has no effect with --policy round-robin' "${sweep[@]}" --policy round-robin --cache-threshold 0.5
expect_fail '^routesim: --cache-threshold has no effect' "$RS" run --policy round-robin --cache-threshold 0.5
[ ! -e s ] || fail "a refused sweep left s/ behind"
expect_ok "${sweep[@]}" --policy round-robin,kv --metric goodput --slo-ttft 500 --bootstrap 10
