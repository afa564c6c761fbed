# 05: finite but huge profile coefficients (step_base_ns 1e19, linear_scale
# 1e300) overflowed to zero-time steps: ITL 0.0 ms, utilisation 0 %, exit 0.
# Every coefficient is checked against its physical bound, naming the file
# and the field; a step that bounded coefficients still make longer than an
# hour stops the run; a --profile is read with a size limit.
src="$REPO/model/data/profiles/a100-sxm4-40gb-qwen3-8b-tp1-calibrated.json"
set_field() { sed -E "s/^(  \"$1\": )[^,]*,/\\1$2,/" "$src" > "$3"; grep -q "\"$1\": $2," "$3" || fail "could not set $1 in $3"; }
set_field step_base_ns 1e19 base.json
expect_fail 'base\.json: profile .*step_base_ns: 1e\+19 ns/step exceeds' "$RS" run --profile base.json --n 2 --first 50
set_field linear_scale 1e300 scale.json
expect_fail 'scale\.json: profile .*linear_scale: 1e\+300 × exceeds' "$RS" run --profile scale.json --n 2 --first 50
set_field decode_ns_per_ctx_token 1e12 ctx.json
expect_fail 'ctx\.json: profile .*decode_ns_per_ctx_token' "$RS" sweep --profile ctx.json --n 2 --first 50 --out sw
[ ! -e sw ] || fail "a refused sweep left its output directory"
# Within every bound, a 1 s-per-token prefill of an 8,192-token chunk is a step of
# hours: the run stops there instead of reporting results.
set_field prefill_ns_per_token 1e9 slow.json
expect_fail 'longer than the 3600 s no engine step takes' "$RS" run --profile slow.json --n 2 --first 50 --max-num-batched-tokens 8192
expect_fail '/dev/zero: larger than 64 MiB' "$RS" run --profile /dev/zero --n 2
