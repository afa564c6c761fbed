# 09: run --policy prefix-hash --prefix-char-length 9223372036854775807
# crashed with an index out of range (the rounding up to whole tokens
# overflowed). The length is bounded, and any length the policy is given
# keys on the prompt's last block when the prompt is shorter.
expect_fail '--prefix-char-length 9223372036854775807 must be at most 1000000000000' "$RS" run --policy prefix-hash --prefix-char-length 9223372036854775807 --n 2 --first 20
expect_fail '--prefix-char-length 0 must be a finite number ≥ 1' "$RS" run --policy prefix-hash --prefix-char-length 0 --n 2 --first 20
expect_ok "$RS" run --policy prefix-hash --prefix-char-length 1000000000000 --n 2 --first 20
grep -q 'offered' stdout.txt || fail "no summary for a run at the bound"
