# Issue 33, item 20: merge with a missing shard exited 1 but left the other
# shards' points copied; now every shard is checked first: the error names
# the missing shard and nothing is written. The complete set merges to the
# unsharded sweep's bytes.
T="$REPO/testdata/traces/arxiv_head60.jsonl"
S=(sweep --trace "$T" --skip 0 --n 2,4 --seeds 2 --policy round-robin,kv --bootstrap 20 --quiet)
for i in 0 1 2; do expect_ok "$RS" "${S[@]}" --shard "$i/3" --out "s$i"; done
expect_fail "shard 1/3 is not among the directories given" "$RS" merge m s0 s2
[ ! -e m ] || fail "the failed merge left m/ behind"
rm s1/points/"$(ls s1/points | head -1)"
expect_fail "shard 1/3 \(s1\) lacks 1 of its points" "$RS" merge m s0 s1 s2
[ ! -e m ] || fail "the failed merge left m/ behind"
expect_ok "$RS" "${S[@]}" --shard 1/3 --out s1
expect_ok "$RS" merge m s0 s1 s2
expect_ok "$RS" "${S[@]}" --out whole
for f in summary.csv summary.parquet crossover.json; do
  cmp -s "m/$f" "whole/$f" || fail "$f differs between the merge and the unsharded sweep"
done
