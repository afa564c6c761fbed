# Issue 33, item 1: a finished point edited after the sweep (p50 set to
# 1.0 or -5, the summary dropped) is refused by a resumed sweep, by plot
# and by merge, naming the file; nothing publishes it. --recompute-bad
# reruns it with a notice and restores the original outputs.
T="$REPO/testdata/traces/arxiv_head60.jsonl"
S=(sweep --trace "$T" --skip 0 --n 2,4 --seeds 2 --policy round-robin --bootstrap 20 --quiet --out d)
expect_ok "$RS" "${S[@]}"
cp d/summary.csv want.csv
p=$(ls d/points/*.json | head -1)
name=$(basename "$p")
cp "$p" original.json
for edit in 's/\("ttft_ms":{[^}]*"p50":\)[0-9.e+-]*/\11.0/' 's/\("ttft_ms":{[^}]*"p50":\)[0-9.e+-]*/\1-5/' 's/"summary":{.*"workers":\[[^]]*\]},//'; do
  cp original.json "$p"
  sed -i "$edit" "$p"
  cmp -s original.json "$p" && fail "the edit $edit changed nothing"
  expect_fail "$name.*content_digest.*--recompute-bad" "$RS" "${S[@]}"
  expect_fail "$name.*content_digest" "$RS" plot d
  expect_fail "$name.*content_digest" "$RS" merge merged d
  [ ! -e merged ] || fail "merge left merged/ behind"
  cmp -s d/summary.csv want.csv || fail "summary.csv changed after $edit: the edited point was published"
done
expect_ok "$RS" "${S[@]}" --recompute-bad
grep -q "recomputing point .*$name.*content_digest" stderr.txt || fail "no notice of the recomputed point: $(cat stderr.txt)"
cmp -s d/summary.csv want.csv || fail "summary.csv differs after recomputing"
cmp -s "$p" original.json || fail "the recomputed point differs from the original"
