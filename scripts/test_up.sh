#!/usr/bin/env bash
# `make test`'s set-up: the venv, a Docker daemon and the browser. Docker's apt install runs beside
# pip's (each keeps about one of the box's cores busy; on the 2-core box, one after the other took
# 62 + 38 s); the browser's apt comes after Docker's, so one dpkg runs at a time. The sandbox images
# are built beside the test run (scripts/ci_checks.sh). A set-up step that fails leaves its tests to
# skip, or to fail where CI is set.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/disk_check.sh 4 0 || exit 2
bash scripts/step.sh docker bash scripts/docker_up.sh &
docker_pid=$!
"${MAKE:-make}" --no-print-directory install
installed=$?
wait "$docker_pid"
[ "$installed" -ne 0 ] && exit "$installed"
bash scripts/step.sh browser bash scripts/browser_up.sh
exit 0
