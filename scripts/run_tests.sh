#!/usr/bin/env bash
# Runs the test suite; pytest's exit code 5 ("no tests collected") is a failure here too.
set -uo pipefail
cd "$(dirname "$0")/.."
export TRITON_INTERPRET=1
# Two workers (KA_TEST_WORKERS): the run is CPU-bound on the 2-core box, and the sandbox images now
# build beside it (scripts/ci_checks.sh). From fresh clones on 2026-12-07: three workers took pytest
# 925 and 953 s, two 888 and 938 s (runs of one code differ by about 50 s); two are no slower and put
# less load on the scorer's timing checks, whose contention watch times a stage again under load.
# A file's tests stay on one worker
# (--dist loadfile), so module-scoped servers, browsers and clusters are started once. The load two
# bring is what the scorer must stand (its judge clocks read the kernel worker's CPU time, not only the wall).
# --no-loadscope-reorder: files go out in the order collected, folder by folder, not by how many
# tests they hold (pytest 826 s against 958 s on the 2-core box, one fresh run each).
.venv/bin/python -m pytest -q -p no:cacheprovider -n "${KA_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder \
    --durations=25 "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
