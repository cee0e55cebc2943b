#!/usr/bin/env bash
# The checks `make test` runs after installing: ruff, then mypy beside pytest (mypy's minute of
# CPU overlaps the test run's start-up and its tail, instead of delaying both), each step timed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/step.sh ruff .venv/bin/ruff check . || exit 1
log=$(mktemp)
bash scripts/step.sh mypy .venv/bin/mypy > "$log" 2>&1 &
mypy_pid=$!
bash scripts/step.sh pytest bash scripts/run_tests.sh
tests=$?
wait "$mypy_pid"
types=$?
cat "$log"
rm -f "$log"
[ "$types" -ne 0 ] && echo "mypy found type errors (above)" >&2
[ "$tests" -ne 0 ] && exit "$tests"
exit "$types"
