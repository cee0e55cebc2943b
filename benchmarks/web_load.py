"""How fast `kernelarena serve` shows a large sweep, in a real browser.

    python benchmarks/web_load.py [--models 14] [--samples 3] [--events 10000] [--templates SWEEP_DIR] [--repeats 3]

Builds, with the orchestrator's own code (tests/web/factory.py), a board of a real sweep's size
(`ledger_board`: `--models` models x the 41 kernelbench tasks x `--samples` samples from the
planner and ledger) and a sweep whose one trial has a `--events`-event transcript (a copy of a
real scripted trial, from a real `kernelarena sweep` of the swish task run first unless
`--templates` names one). Serves them with uvicorn on loopback and drives headless Debian
chromium (Playwright) to measure:

- leaderboard first paint: navigation start to the leaderboard's rows painted (the next animation
  frame after they exist), and to the task x model matrix painted, cold (the browser's first page
  of the session, and the server builds the board and its 1000-resample bootstrap) and warm
  (cached until the sweep changes); and the server's cold build alone;
- transcript load: navigation start to the first page of events painted, cold (the server takes
  the file's line offsets) and warm; the next page after a scroll to the end; and the time for
  the page to fetch the whole transcript through the paged API;
- bootstrap cost for 50 models x 300 tasks (benchmarks/bootstrap_cost.py's data and timing).

Prints one table. Needs the web extra and the browser (scripts/browser_up.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bootstrap_cost import synthetic  # noqa: E402
from kernelarena.logs import configure  # noqa: E402
from orchestrator.bootstrap import bootstrap  # noqa: E402
from orchestrator.web.catalog import Catalog  # noqa: E402
from tests.web.browser import chromium, serve  # noqa: E402
from tests.web.factory import TemplateTrial, ledger_board, planned_sweep, real_sweep, run_sweep, templates  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Page

PAINTED = "() => new Promise(r => requestAnimationFrame(() => r(performance.now())))"
# Scroll to the end n times; the median time until the next page's events are in the DOM and painted.
SCROLL = """async (n) => {
  const times = [];
  for (let k = 0; k < n; k++) {
    const before = document.querySelectorAll('.ev').length, t = performance.now();
    window.scrollTo(0, document.body.scrollHeight);
    while (document.querySelectorAll('.ev').length === before) await new Promise(r => setTimeout(r, 5));
    await new Promise(r => requestAnimationFrame(r));
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}"""
FETCH_ALL = """async ({url, limit}) => {
  const t = performance.now();
  let offset = 0, total = 1;
  while (offset < total) {
    const page = await (await fetch(`${url}&offset=${offset}&limit=${limit}`)).json();
    total = page.total; offset += page.events.length;
  }
  return performance.now() - t;
}"""


def build(root: Path, models: int, samples: int, events: int, source: Path | None) -> str:
    ledger_board(root / "big", models=models, samples=samples)
    if source is None:
        source = real_sweep(root / "templates", ["swish"])
    spec, planned = planned_sweep(root / "long", "long", [{"id": "scripted:reference"}], ["swish"])
    run_sweep(spec, root / "long", planned, TemplateTrial(templates(source), long_trials={planned[0].trial_id: events}))
    return planned[0].trial_id


def timed_goto(page: Page, url: str, selector: str) -> float:
    """Milliseconds from navigation start to the frame after `selector` exists."""
    page.goto("about:blank")
    page.goto(url, wait_until="commit")
    page.wait_for_selector(selector, timeout=120_000)
    return float(page.evaluate(PAINTED))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=14)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--templates", type=Path, default=None, help="a finished scripted sweep of the demo task swish")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the sweep folders")
    args = ap.parse_args()
    configure(level="WARNING")
    os.environ.setdefault("TRITON_INTERPRET", "1")
    root = Path(tempfile.mkdtemp(prefix="kernelarena-webbench-"))
    t0 = time.perf_counter()
    long_trial = build(root, args.models, args.samples, args.events, args.templates)
    built_s = time.perf_counter() - t0
    big = json.loads((root / "big" / "index.json").read_text())
    rows: list[tuple[str, str]] = [
        ("sweep folders built (s)", f"{built_s:.1f}"),
        ("trials on the board", f"{len(big['trials'])} ({args.models} models x 41 tasks x {args.samples})"),
    ]
    catalog = Catalog([root], resamples=1000)
    t = time.perf_counter()
    catalog.board("big", "kernelbench")
    rows.append(("server alone: board built cold, ledger read and 1000-resample bootstrap (ms)",
                 f"{(time.perf_counter() - t) * 1e3:.0f}"))
    with serve([root], resamples=1000) as url, chromium() as ctx:
        page = ctx.new_page()
        board = f"{url}/#/board/big/kernelbench"
        rows.append(("leaderboard first paint, cold (ms)", f"{timed_goto(page, board, '#leaderboard tbody tr'):.0f}"))
        warm = [timed_goto(page, board, "#leaderboard tbody tr") for _ in range(args.repeats)]
        rows.append(("leaderboard first paint, warm (ms, best)", f"{min(warm):.0f}"))
        warm = [timed_goto(page, board, "#plot-speedup svg.main-svg") for _ in range(args.repeats)]
        rows.append(("board with its plots drawn, warm (ms, best)", f"{min(warm):.0f}"))
        trial = f"{url}/#/trial/long/{quote(long_trial, safe='')}"
        rows.append((f"transcript of {args.events} events, first page painted, cold (ms)",
                     f"{timed_goto(page, trial, '.ev'):.0f}"))
        warm = [timed_goto(page, trial, ".ev") for _ in range(args.repeats)]
        rows.append((f"transcript of {args.events} events, first page painted, warm (ms, best)", f"{min(warm):.0f}"))
        scrolled = page.evaluate(SCROLL, 5)
        rows.append(("transcript: next page of 200 painted after a scroll to the end (ms, median of 5)", f"{scrolled:.0f}"))
        whole = page.evaluate(FETCH_ALL, {"url": f"/api/transcript?sweep=long&trial={quote(long_trial, safe='')}", "limit": 1000})
        rows.append((f"transcript of {args.events} events, every page fetched by the page (ms, pages of 1000)", f"{whole:.0f}"))
    data = synthetic(50, 300, 1)
    best = float("inf")
    for _ in range(args.repeats):
        t = time.perf_counter()
        bootstrap(data, 1000, seed=0)
        best = min(best, time.perf_counter() - t)
    rows.append(("bootstrap, 50 models x 300 tasks x 1000 resamples (s, best)", f"{best:.2f}"))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    width = max(len(k) for k, _ in rows)
    print(f"{'figure':<{width}}  value  (cpus={os.cpu_count()})")
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
