# Issue 33, item 2: run and sweep never write into each other's directory
# (nor plan into either): the refused command names the directory and its
# owner and changes nothing; while a sweep runs, run is refused naming the
# sweep's pid.
T="$REPO/testdata/traces/arxiv_head60.jsonl"
expect_ok "$RS" sweep --trace "$T" --skip 0 --n 2 --seeds 1 --policy round-robin --quiet --out s
cp -r s s.before
expect_fail "--out s belongs to a sweep" "$RS" run --trace "$T" --n 2 --out s
expect_fail "--out s belongs to a sweep" "$RS" plan --trace "$T" --skip 0 --n 1..2 --seeds 1 --policy round-robin --slo-ttft-p95 100000 --quiet --out s
diff -r s s.before >/dev/null || fail "the sweep's directory changed"
expect_ok "$RS" run --trace "$T" --n 2 --out r
cp -r r r.before
expect_fail "--out r belongs to a run" "$RS" sweep --trace "$T" --skip 0 --n 2 --seeds 1 --policy round-robin --quiet --out r
expect_fail "OUT r belongs to a run" "$RS" merge r s
diff -r r r.before >/dev/null || fail "the run's directory changed"
# A sweep that is running holds its directory.
"$RS" sweep --n 2..16 --seeds 5 --jobs 1 --quiet --out live >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 400); do [ -s live/.routesim.lock ] && break; sleep 0.05; done
[ -s live/.routesim.lock ] || { kill "$pid"; fail "the sweep never took its lock"; }
rc=0
expect_fail "--out live is being written by another routesim \(pid $pid\).*kill $pid" "$RS" run --trace "$T" --n 2 --out live || rc=$?
kill "$pid"
wait "$pid" || true
[ "$rc" -eq 0 ] || fail "run was not refused while the sweep ran"
[ ! -e live/summary.csv ] || fail "run wrote into the running sweep's directory"
