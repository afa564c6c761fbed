# Issue 33, item 10: a point file whose ttft_ms is null, missing or shorter
# than arrival_s made resume, plot and merge panic in plots.TTFTByDecile;
# now each is a clean error naming the file.
T="$REPO/testdata/traces/arxiv_head60.jsonl"
S=(sweep --trace "$T" --skip 0 --n 2,4 --seeds 1 --policy round-robin --bootstrap 20 --quiet --out d)
expect_ok "$RS" "${S[@]}"
p=$(ls d/points/*.json | head -1)
name=$(basename "$p")
cp "$p" original.json
for edit in 's/"ttft_ms":\[[^]]*\]/"ttft_ms":null/' 's/,"ttft_ms":\[[^]]*\]//' 's/"ttft_ms":\[\([^]]*\),[^],]*\]/"ttft_ms":[\1]/'; do
  cp original.json "$p"
  sed -i "$edit" "$p"
  cmp -s original.json "$p" && fail "the edit $edit changed nothing"
  for cmd in "${S[*]}" "plot d" "merge merged d"; do
    # shellcheck disable=SC2086
    expect_fail "$name" "$RS" $cmd
    if grep -q "internal error" stderr.txt; then fail "$cmd crashed: $(cat stderr.txt)"; fi
  done
done
