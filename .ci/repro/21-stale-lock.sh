# Issue 33, item 21: an empty .routesim.lock (or pid -1, or garbage) blocked
# every later sweep with no pid and no way out but rm. A lock no live
# routesim holds is now taken over; a live one is refused naming its pid
# and how to stop it.
T="$REPO/testdata/traces/arxiv_head60.jsonl"
S=(sweep --trace "$T" --skip 0 --n 2 --seeds 1 --policy round-robin --quiet --out d)
mkdir d
for body in "" "-1" "0" "garbage" "4194305"; do
  printf '%s' "$body" > d/.routesim.lock
  expect_ok "$RS" "${S[@]}"
  [ ! -e d/.routesim.lock ] || fail "the sweep left its lock (lock was '$body')"
done
"$RS" sweep --n 2..16 --seeds 5 --jobs 1 --quiet --out live >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 400); do [ -s live/.routesim.lock ] && break; sleep 0.05; done
rc=0
expect_fail "being written by another routesim \(pid $pid\); wait for it to finish, or stop it \(kill $pid\)" "$RS" sweep --n 2..16 --seeds 5 --quiet --out live || rc=$?
kill "$pid"
wait "$pid" || true
[ "$rc" -eq 0 ] || fail "a second sweep was not refused while the first ran"
