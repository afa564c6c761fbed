# 24: notebooks/check compared printed output chunk by chunk, and the
# kernel's chunking depends on timing, so it failed about half the time.
# What a notebook shows is now compared as one text per stream: every
# committed notebook, re-chunked by 1, 7 and 64 characters, reads the same
# (notebooks/test_streams.py, plain Python: no Jupyter needed).
command -v python3 >/dev/null || fail "python3 not found: it runs notebooks/test_streams.py"
(cd "$REPO/notebooks" && PYTHONDONTWRITEBYTECODE=1 python3 -m unittest test_streams 2>&1) || fail "notebooks/test_streams.py failed"
