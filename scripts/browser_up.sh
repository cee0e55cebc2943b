#!/usr/bin/env bash
# Makes the browser tests runnable: Debian's headless `chromium` (apt) and the Playwright Python
# package (pip, into the project's venv; Playwright's own browser download is never used: the tests
# drive /usr/bin/chromium). Idempotent and quick when both are there. Exit 1 with one clear line otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
say() { echo "browser_up: $*" >&2; }
source scripts/apt.sh

if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium || exit 1
fi

if ! "$PY" -c "import playwright" >/dev/null 2>&1; then
  say "installing the playwright package"
  "$PY" -m pip install -q -e '.[browser]' || { say "pip install 'kernelarena[browser]' failed"; exit 1; }
fi
say "chromium $(chromium --version 2>/dev/null | awk '{print $2}') and playwright ready"
