# 13: --scenario /dev/zero read without limit; every reader is bounded,
# with an error naming the file: the scenario (run, sweep, plan), a trace
# that never ends, and a gzip bomb of blank lines (50 MB from 50 KB).
expect_fail '/dev/zero.*larger than 64 MiB' "$RS" run --scenario /dev/zero
expect_fail '/dev/zero.*larger than 64 MiB' "$RS" sweep --scenario /dev/zero --out sw
expect_fail '/dev/zero.*larger than 64 MiB' "$RS" plan --scenario /dev/zero --out pl
expect_fail '/dev/zero:1: line longer than' "$RS" run --trace /dev/zero
head -c 50000001 /dev/zero | tr '\0' '\n' | gzip -1 > bomb.jsonl.gz
expect_fail 'bomb\.jsonl\.gz:50000001: more than 50000000 lines' "$RS" run --trace bomb.jsonl.gz
expect_fail 'bomb\.jsonl\.gz:50000001: more than 50000000 lines' "$RS" run --trace bomb.jsonl.gz --stream
[ ! -e sw ] && [ ! -e pl ] || fail "a refused sweep or plan left an output directory"
