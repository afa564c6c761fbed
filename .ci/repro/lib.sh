# Helpers for the reproduction cases in .ci/repro/NN-*.sh (sourced by run).
# Each case runs in its own empty directory with $RS, the built routesim.

# expect_fail PATTERN CMD...: CMD must exit non-zero within $REPRO_TIMEOUT s,
# without a Go panic or fatal error, and its stderr must match the
# extended regular expression PATTERN.
expect_fail() {
  local pat=$1 rc=0
  shift
  timeout "${REPRO_TIMEOUT:-60}" "$@" >stdout.txt 2>stderr.txt || rc=$?
  if [ "$rc" -eq 124 ]; then echo "timed out after ${REPRO_TIMEOUT:-60} s: $*"; return 1; fi
  if crashed; then echo "crashed: $*"; head -20 stderr.txt; return 1; fi
  if [ "$rc" -eq 0 ]; then echo "exit 0, expected an error: $*"; return 1; fi
  if ! grep -qE -- "$pat" stderr.txt; then
    echo "exit $rc, but the error does not match /$pat/: $*"; head -5 stderr.txt; return 1
  fi
}

# expect_ok CMD...: CMD must exit 0 within $REPRO_TIMEOUT s without a crash.
expect_ok() {
  local rc=0
  timeout "${REPRO_TIMEOUT:-60}" "$@" >stdout.txt 2>stderr.txt || rc=$?
  if [ "$rc" -eq 124 ]; then echo "timed out after ${REPRO_TIMEOUT:-60} s: $*"; return 1; fi
  if crashed || [ "$rc" -ne 0 ]; then echo "exit $rc: $*"; head -20 stderr.txt; return 1; fi
}

# crashed: the last command's stderr shows a Go panic or runtime fatal error.
crashed() {
  grep -qE '^(panic:|fatal error:|goroutine [0-9]+ \[|runtime: out of memory)' stderr.txt
}

# fail MESSAGE: end the case as failed.
fail() {
  echo "$*"
  exit 1
}
