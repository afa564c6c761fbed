# Item 11: sweep --bootstrap 9223372036854775807 ran without end. It is
# bounded (100,000 replicates) and checked before anything is written.
REPRO_TIMEOUT=20 expect_fail '--bootstrap' "$RS" sweep --n 2 --seeds 2 --first 10 --policy round-robin,kv --bootstrap 9223372036854775807 --out s
[ ! -e s ] || fail "sweep --bootstrap left s/ behind"
REPRO_TIMEOUT=20 expect_fail '--bootstrap' "$RS" sweep --n 2 --seeds 2 --first 10 --bootstrap -1 --out s
expect_ok "$RS" sweep --n 2 --seeds 2 --first 10 --policy round-robin,kv --bootstrap 100 --quiet --out s
