# 17: scenario errors named the first occurrence of the key's text, not
# the field's line, and engine-level errors named a flag instead of
# file:line: field. Every error now names the field's own line; a flag
# that overrides the file is named as the flag.
printf '{"description": "n",\n "n": 0}\n' > str.json
expect_fail '^routesim: --scenario: str\.json:2: n: 0 must be in' "$RS" run --scenario str.json
printf '{"workload": "sessions",\n "sessions": {\n  "concurrency": 2,\n  "sessions": -1}}\n' > outer.json
expect_fail 'outer\.json:4: sessions\.sessions:' "$RS" run --scenario outer.json
printf '{\n "n": 2,\n "gpus": "H100"}\n' > unknown.json
expect_fail 'unknown\.json:3: gpus: unknown field' "$RS" run --scenario unknown.json
printf '{"description": "retry",\n "n": 2,\n "retry": -1}\n' > retry.json
expect_fail '^routesim: retry\.json:3: retry: -1 must be in \[0, 100\]' "$RS" run --scenario retry.json --first 10
expect_fail '^routesim: --retry 101 must be in \[0, 100\]' "$RS" run --scenario retry.json --first 10 --retry 101
expect_fail 'retry\.json:3: retry: -1 must be in' "$RS" sweep --scenario retry.json --first 10 --n 2 --seeds 1 --policy round-robin --out sw
printf '{"description": "max_model_len",\n "max_model_len": 10000000}\n' > mml.json
expect_fail '^routesim: mml\.json:2: max_model_len: 10000000 exceeds' "$RS" run --scenario mml.json --first 10
expect_fail 'mml\.json:2: max_model_len: 10000000 exceeds' "$RS" plan --scenario mml.json --first 10 --n 1..2 --seeds 1 --slo-ttft-p95 1000 --out pl
[ ! -e sw ] && [ ! -e pl ] || fail "a refused sweep or plan left an output directory"
