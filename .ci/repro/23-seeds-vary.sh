# Item 23: seeds that vary nothing. The default profile carries the
# run-to-run noise the 8×A100 study's repetitions show, so round-robin's
# seeds differ on a trace replay; where seeds cannot differ (a profile
# without noise, policies that draw nothing) the sweep says so and prints
# no interval.
expect_ok "$RS" sweep --n 2 --seeds 3 --first 200 --policy round-robin,prefix-hash --out noisy --quiet
n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ttft_ms_p50") c = i } NR > 1 && $2 == "round-robin" { print $c }' noisy/summary.csv | sort -u | wc -l)
[ "$n" -eq 3 ] || fail "round-robin's TTFT p50 took $n distinct values over 3 seeds on the default profile"
expect_ok "$RS" sweep --n 2..3 --seeds 5 --first 200 --policy round-robin,prefix-hash --gpu H100-SXM5-80GB --model Llama-3.1-8B --out quiet --quiet
grep -q "seeds: all 5 seeds gave identical results" stdout.txt || fail "a noiseless sweep does not say its seeds are identical"
if grep " vs " stdout.txt | grep -qE "CI|replicates"; then fail "identical seeds, yet an interval: $(grep ' vs ' stdout.txt)"; fi
grep -q '"seeds_identical": true' quiet/crossover.json || fail "crossover.json does not mark identical seeds"
