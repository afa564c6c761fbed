# Item 19: calibrate checks every flag and spec option by name, and
# prints values, not Go pointers.

ml=(--mlenergy "$REPO/testdata/mlenergy-h100-v3/runs.csv" --osl "$REPO/testdata/mlenergy-h100-v3/osl-qwen3-8b.json" --model Qwen3-8B --out out)

# Spec-fit settings mean nothing to an ML.ENERGY fit (they were ignored).
expect_fail '--model-error' "$RS" calibrate "${ml[@]}" --model-error NaN
expect_fail '--prior-weight' "$RS" calibrate "${ml[@]}" --prior-weight Inf
expect_fail '--fit' "$RS" calibrate "${ml[@]}" --fit bogus
[ ! -e out ] || fail "a refused calibration wrote --out"

# With a spec they are range-checked before any file is read.
expect_fail '--model-error NaN must be in \[0.001, 10\]' "$RS" calibrate --spec nope.json --model-error NaN
expect_fail '--prior-weight \+Inf must be in \[0, 1000\]' "$RS" calibrate --spec nope.json --prior-weight Inf
expect_fail '--fit: unknown coefficient "bogus"' "$RS" calibrate --spec nope.json --fit bogus

# A spec's options: field, line and value.
cat > spec.json <<'JSON'
{"name": "x",
 "options": {"prior_weight": -2},
 "runs": [{"name": "a", "arm": "a", "aiperf_summary": "s.json", "setup": {}}]}
JSON
expect_fail 'spec.json:2: options.prior_weight: -2 must be in \[0, 1000\]' "$RS" calibrate --spec spec.json
if grep -q '0x[0-9a-f]' stderr.txt; then fail "a pointer in the message: $(cat stderr.txt)"; fi
