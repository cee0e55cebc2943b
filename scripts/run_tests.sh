#!/usr/bin/env bash
# Runs the test suite; pytest's exit code 5 ("no tests collected") is a failure here too.
set -uo pipefail
cd "$(dirname "$0")/.."
export TRITON_INTERPRET=1
# Two workers (KA_TEST_WORKERS): many tests wait on Docker, subprocesses and fake providers (on the 2-core
# box: 19-21 min, 14 min of CPU). A file's tests stay on one worker (--dist loadfile), so module-scoped
# servers, browsers and clusters are started once. Three workers took 17:39 there but load the box enough
# that the judge's batch clock read an honest C++ loop kernel 10x slow (session 20, open).
.venv/bin/python -m pytest -q -p no:cacheprovider -n "${KA_TEST_WORKERS:-2}" --dist loadfile "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
