# 14: a profile whose posterior covariance is huge but positive definite,
# with --uncertainty 2, ran for minutes on 50 requests, and a draw that
# failed at once was reported only after all draws. Every draw is now
# validated like a profile (the same physical bounds) before anything
# runs, and the first draw to fail at run time stops the others.
REPRO_TIMEOUT=20
src="$REPO/model/data/profiles/a100-sxm4-80gb-llama-3.1-8b-tp1-blis.json"
with_posterior() { # with_posterior FILE PARAMS MEAN_LOG COV_LOG
  sed "1a\\
  \"posterior\": {\"method\": \"repro\", \"params\": $2, \"mean_log\": $3, \"cov_log\": $4, \"prior_sd_log\": [1, 1], \"identified\": [false, false], \"narrowed\": [false, false], \"model_error_log\": 0.1}," "$src" > "$1"
}
# sd 100 in log units: draws of 1e40 ns and more.
with_posterior wide.json '["step_base_ns", "decode_ns_per_seq"]' '[16.6, 9.8]' '[[10000, 0], [0, 10000]]'
expect_fail 'posterior draw [12] of 2: profile .*exceeds' "$RS" run --profile wide.json --uncertainty 2 --n 2 --first 50
grep -q 'the posterior is too wide for its draws to be physical (cov_log sd up to 100 in log units)' stderr.txt || fail "the error does not say the posterior is too wide"
expect_fail 'posterior draw [12] of 2: profile .*exceeds' "$RS" sweep --profile wide.json --uncertainty 2 --n 2 --first 50 --out sw
expect_fail 'posterior draw [12] of 2: profile .*exceeds' "$RS" plan --profile wide.json --uncertainty 2 --n 2..4 --first 50 --slo-ttft-p95 5000 --out pl
[ ! -e sw ] && [ ! -e pl ] || fail "a refused sweep or plan left its output directory"
# Draws within every bound (0.9 s per prefill token) whose steps still
# take hours: the first draw's run fails, and the other 199 never run.
with_posterior slow.json '["prefill_ns_per_token", "decode_ns_per_seq"]' '[20.6, 9.8]' '[[0.0001, 0], [0, 0.0001]]'
expect_fail '--uncertainty: draw [0-9]+ of 200: sim: worker [0-9]+: a step of .* longer than the 3600 s' "$RS" run --profile slow.json --uncertainty 200 --n 2 --first 50 --max-num-batched-tokens 8192
