# 12: run --policy prefix-hash --replication 65536 --n 4096, both within
# their documented limits, built a 268 M-point ring (4.2 GB, still running
# after 60 s). The ring's size, workers × replication, is bounded too,
# checked before anything runs, naming both flags (run, sweep, plan).
REPRO_TIMEOUT=20
msg='--replication 65536 × 4096 workers \(--n\) would put 268435456 points on the hash ring, more than the 4194304 it may hold: at 4096 workers, use at most 1024'
expect_fail "$msg" "$RS" run --policy prefix-hash --replication 65536 --n 4096 --first 20
expect_fail "$msg" "$RS" sweep --policy prefix-hash --replication 65536 --n 2,4096 --first 20 --out sw
expect_fail "$msg" "$RS" plan --policy prefix-hash --replication 65536 --n 2..4096 --first 20 --slo-ttft-p95 5000 --out pl
[ ! -e sw ] && [ ! -e pl ] || fail "a refused sweep or plan left an output directory"
# Each limit alone still runs: the largest replication on 2 workers, the
# most workers at the largest replication they allow.
expect_ok "$RS" run --policy prefix-hash --replication 65536 --n 2 --first 20
expect_ok "$RS" run --policy prefix-hash --replication 1024 --n 4096 --first 20
