# 25: FuzzReadProfile spent ~60 s minimising mutants of its large seeds
# (a 10 KB shipped profile) and looked hung. Its seeds are small now and
# large inputs are skipped, so a 10 s fuzzing run ends near 10 s (the test
# binary's own time, without the build; 5 s for start-up and wind-down).
(cd "$REPO" && timeout 120 go test ./model -run XXX -fuzz FuzzReadProfile -fuzztime 10s) > fuzz.txt 2>&1 || { tail -20 fuzz.txt; fail "go test -fuzz FuzzReadProfile failed or did not end within 120 s"; }
took=$(sed -nE 's/^ok[[:space:]]+[^[:space:]]+[[:space:]]+([0-9.]+)s$/\1/p' fuzz.txt)
[ -n "$took" ] || { tail -5 fuzz.txt; fail "no test time in go test's output"; }
awk -v t="$took" 'BEGIN { exit !(t <= 15) }' || { tail -8 fuzz.txt; fail "fuzzing for 10 s took $took s"; }
