"""Screenshots of the web app for the README: the board, the kernel matrix, a kernel page and a
transcript, each at 1440x900 and at a phone's 390x844 (viewport shots, not whole pages).

The board is tests/web/factory.py's `ledger_board` (14 models x 41 kernelbench tasks x 3 samples,
made-up verdicts through the real planner and ledger), served by the app on loopback and shot in
headless Debian chromium (scripts/browser_up.sh installs it). PNGs go to docs/screenshots/;
pngquant, when installed, shrinks them to a 256-colour palette.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.web.browser import chromium, missing_prerequisite, serve  # noqa: E402
from tests.web.factory import ledger_board  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Page

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}


def shoot(page: Page, url: str, path: Path, ready: str, then: str | None = None) -> None:
    page.goto(url)
    page.wait_for_selector(ready)
    if then:
        page.evaluate(then)
    page.wait_for_timeout(400)  # plots finish their transitions
    page.screenshot(path=str(path))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    why = missing_prerequisite()
    if why:
        print(f"screenshots: {why}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kernelarena-shots-"))
    try:
        ledger_board(work / "demo")
        index = json.loads((work / "demo" / "index.json").read_text())
        trial = next(t for t in index["trials"] if t["model"] == "model-00" and t["verdict"] == "passed")
        written = []
        with serve([work]) as base, chromium() as context:
            page = context.new_page()
            for size, (w, h) in SIZES.items():
                page.set_viewport_size({"width": w, "height": h})
                board = f"{base}/#/board/demo/kernelbench"
                shots = [
                    ("board", board, "#plot-cost svg.main-svg", None),
                    ("matrix", board, "#kernels tbody tr",
                     "document.getElementById('matrix-legend').scrollIntoView({block: 'start'}); window.scrollBy(0, -60)"),
                    ("kernel", f"{base}/#/kernel/demo/kernelbench/{trial['task']}?trial={quote(trial['trial_id'], safe='')}",
                     "details.trial[open] pre.code span", "window.scrollTo(0, 0)"),
                    ("transcript", f"{base}/#/trial/demo/{quote(trial['trial_id'], safe='')}",
                     ".ev[data-type='trial_end']", None),
                ]
                for name, url, ready, then in shots:
                    path = args.out / f"{name}-{size}.png"
                    shoot(page, url, path, ready, then)
                    written.append(path)
        if shutil.which("pngquant"):
            subprocess.run(["pngquant", "--force", "--skip-if-larger", "--ext", ".png", "--quality", "60-90",
                            *map(str, written)], check=False)
        for path in written:
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}  {path.stat().st_size // 1024} KB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
