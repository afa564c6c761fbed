# Issue 33, item 3: --trace-decisions D/summary.json --out D replaced the
# decisions with the summary: refused before anything is written, as is
# any spelling of one of --out's files; side by side they both land.
T="$REPO/testdata/traces/arxiv_head60.jsonl"
mkdir d
expect_fail "--out d \(its summary.json\) and --trace-decisions d/summary.json are the same file" "$RS" run --trace "$T" --n 2 --trace-decisions d/summary.json --out d
[ -z "$(ls -A d)" ] || fail "the refused run wrote into d/: $(ls -A d)"
expect_fail "same file" "$RS" run --trace "$T" --n 2 --trace-decisions ./x/../d/manifest.json --out d
[ -z "$(ls -A d)" ] || fail "the refused run wrote into d/: $(ls -A d)"
expect_ok "$RS" run --trace "$T" --n 2 --trace-decisions d/decisions.jsonl --out d
grep -q '"outcome"' d/decisions.jsonl || fail "decisions.jsonl holds no decisions"
grep -q '"offered"' d/summary.json || fail "summary.json is not the summary"
