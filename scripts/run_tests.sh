#!/usr/bin/env bash
# Runs the test suite; pytest's exit code 5 ("no tests collected") is a failure here too.
set -uo pipefail
cd "$(dirname "$0")/.."
export TRITON_INTERPRET=1
# Three workers (KA_TEST_WORKERS): many tests wait on Docker, subprocesses and fake providers, so the
# 2-core box is far from busy with two (session 20 on it: 19:26 and 20:46 with two, the first using 14 min
# of CPU; 17:39 with three). A file's tests stay on one worker (--dist loadfile), so module-scoped servers,
# browsers and clusters are started once. (`--dist loadgroup` would spread the corpus files, but under
# pytest 9 xdist's groups are not applied to the node ids: every test went anywhere.)
.venv/bin/python -m pytest -q -p no:cacheprovider -n "${KA_TEST_WORKERS:-3}" --dist loadfile "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
