#!/usr/bin/env bash
# Runs the test suite; pytest's exit code 5 ("no tests collected") is a failure here too.
set -uo pipefail
cd "$(dirname "$0")/.."
export TRITON_INTERPRET=1
# Three workers (KA_TEST_WORKERS): many tests wait on Docker, subprocesses and fake providers, so on the
# 2-core box two workers took 19-21 min on 14 min of CPU, three 17:39. Since then the run is CPU-bound
# (98% busy with three, 99% with five, and five were no faster), so time comes from less work: with
# torch-free native attack builds and a CLI that imports torch only to score, three took 13:53 (session
# 23, fresh clone). A file's tests stay on one worker
# (--dist loadfile), so module-scoped servers, browsers and clusters are started once. The load three
# bring is what the scorer must stand (its judge clocks read the kernel worker's CPU time, not only the wall).
# --no-loadscope-reorder: files go out in the order collected, folder by folder, not by how many
# tests they hold (pytest 826 s against 958 s on the 2-core box, one fresh run each).
.venv/bin/python -m pytest -q -p no:cacheprovider -n "${KA_TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder \
    --durations=25 "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
