#!/usr/bin/env bash
# The checks `make test` runs after its set-up: ruff, then the sandbox images' build and mypy beside
# pytest, each step timed. The build (debootstrap, pip into the image, docker import, npm: about 2
# minutes on the 2-core box, much of it waiting on the disk) and mypy's minute of CPU overlap the
# test run instead of delaying it; tests marked `docker` wait for the build (KA_IMAGES_STATUS, read
# by tests/conftest.py). --with: the agents image (Claude Code and Codex CLIs) for the harness tests.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/step.sh ruff .venv/bin/ruff check . || exit 1
images_log=$(mktemp)
KA_IMAGES_STATUS=$(mktemp -u)
export KA_IMAGES_STATUS
(
  bash scripts/disk_check.sh 0 7 >"$images_log" 2>&1 &&
  bash scripts/step.sh images .venv/bin/kernelarena sandbox build-image --with claude-code,codex >>"$images_log" 2>&1
  echo "$?" >"$KA_IMAGES_STATUS.part" && mv "$KA_IMAGES_STATUS.part" "$KA_IMAGES_STATUS"
) &
images_pid=$!
types_log=$(mktemp)
bash scripts/step.sh mypy .venv/bin/mypy >"$types_log" 2>&1 &
mypy_pid=$!
bash scripts/step.sh pytest bash scripts/run_tests.sh
tests=$?
wait "$images_pid"
wait "$mypy_pid"
types=$?
cat "$images_log" "$types_log"
rm -f "$images_log" "$types_log" "$KA_IMAGES_STATUS"
[ "$types" -ne 0 ] && echo "mypy found type errors (above)" >&2
[ "$tests" -ne 0 ] && exit "$tests"
exit "$types"
