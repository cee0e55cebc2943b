"""The web app in a real browser: headless Debian chromium driven by Playwright, against the app
served by uvicorn on loopback, over sweep folders written by the orchestrator's own code (a real
`kernelarena sweep` of scripted models, and SweepRunner sweeps of stand-in trials; tests/web/factory.py).

One sweep set, one server and one browser for the module (module-scoped fixtures).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from orchestrator.leaderboard import sig
from tests.orchestrator.sweep_helpers import cli
from tests.web.browser import checked_page, chromium, missing_prerequisite, serve
from tests.web.factory import TemplateTrial, ledger_board, planned_sweep, real_sweep, run_sweep, templates

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(missing_prerequisite() is not None, reason=str(missing_prerequisite()))]

LONG_EVENTS = 10_000
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    real = real_sweep(root / "real", ["swish"])
    spec, planned = planned_sweep(root / "long", "long", [{"id": "scripted:reference"}], ["swish"])
    run_sweep(spec, root / "long", planned, TemplateTrial(templates(real), long_trials={planned[0].trial_id: LONG_EVENTS}))
    ledger_board(root / "big")  # 14 models x 41 kernelbench tasks x 3 samples
    return root


@pytest.fixture(scope="module")
def live(root: Path) -> Iterator[tuple[list, dict[str, threading.Event]]]:
    """A sweep still running: every trial has begun its transcript and waits for the test to let it finish."""
    out = root / "live"
    spec, planned = planned_sweep(out, "live", [{"id": "scripted:reference"}, {"id": "scripted:hacker"}], ["swish"], samples=2)
    gates = {t.trial_id: threading.Event() for t in planned}
    runner = TemplateTrial(templates(root / "real"), gates=gates)
    thread = threading.Thread(target=run_sweep, args=(spec, out, planned, runner), daemon=True)
    thread.start()
    yield planned, gates
    for gate in gates.values():
        gate.set()
    thread.join(timeout=60)


@pytest.fixture(scope="module")
def base_url(root: Path, live: tuple) -> Iterator[str]:
    with serve([root]) as url:
        yield url


@pytest.fixture(scope="module")
def context() -> Iterator[object]:
    with chromium() as ctx:
        ctx.set_default_timeout(TIMEOUT_MS)
        yield ctx


@pytest.fixture()
def page(context: object) -> Iterator[object]:
    with checked_page(context) as page:
        yield page


def _column(page: object, table: str, col: int) -> list[str]:
    return page.eval_on_selector_all(f"#{table} tbody tr", f"rows => rows.map(r => r.cells[{col}].innerText.trim())")  # type: ignore[attr-defined]


def test_leaderboard_sorts_and_shows_intervals(page: object, base_url: str, root: Path) -> None:
    page.goto(f"{base_url}/#/board/real/demo")
    page.wait_for_selector("#leaderboard tbody tr")
    assert _column(page, "leaderboard", 1) == ["scripted:reference", "scripted:hacker"]  # ranked by score

    # The same intervals and rank confidence as `kernelarena leaderboard --format json` at the same N and seed.
    proc = cli("leaderboard", str(root / "real"), "--format", "json", "--bootstrap", "200", "--seed", "0")
    board = json.loads(proc.stdout)
    best = board["models"][0]
    score_cell = page.inner_text("#leaderboard tbody tr:first-child td.score")
    assert sig(best["score_ci"][1]) in score_cell.replace("\n", " ")
    assert page.inner_text("#leaderboard tbody tr:first-child td:nth-child(4)") == f"{best['order_confidence']:.2f}"

    page.click("#leaderboard th:has-text('hacks')")  # numbers sort high to low first
    assert _column(page, "leaderboard", 1) == ["scripted:hacker", "scripted:reference"]
    assert page.get_attribute("#leaderboard th:has-text('hacks')", "aria-sort") == "descending"
    page.click("#leaderboard th:has-text('hacks')")
    assert _column(page, "leaderboard", 1) == ["scripted:reference", "scripted:hacker"]
    page.click("#leaderboard th:has-text('model')")  # text sorts A-Z first
    assert _column(page, "leaderboard", 1) == ["scripted:hacker", "scripted:reference"]


def test_kernel_page_shows_evidence_and_diff(page: object, base_url: str, root: Path) -> None:
    index = json.loads((root / "real" / "index.json").read_text())
    hacker = next(t for t in index["trials"] if t["model"] == "scripted:hacker")
    score = json.loads((root / "real" / hacker["rel_dir"] / "score.json").read_text())
    assert score["verdict"] == "hack_detected" and score["hacks"]

    page.goto(f"{base_url}/#/kernel/real/demo/swish")
    card = page.locator("details.trial[data-model='scripted:hacker']").first
    card.wait_for()
    assert card.get_attribute("open") is None  # collapsed until asked for
    card.locator("summary").first.click()
    card.locator("pre.code span").first.wait_for()  # the code is rendered when the card opens
    assert "hack detected" in card.locator("header .badge").first.inner_text()
    # one box per pattern however many input sets showed it; every piece of evidence in it (the
    # first shown, the others one click away)
    patterns = [h["pattern"] for h in score["hacks"]]
    assert card.locator(".finding > b").all_inner_texts() == list(dict.fromkeys(patterns))
    findings = card.locator(".finding").evaluate_all("fs => fs.map(f => f.textContent)")
    for hack in score["hacks"]:
        assert any(hack["pattern"] in f and hack["evidence"] in f for f in findings), (hack, findings)
    # The diff against the reference solution: the hack drops the Triton kernel and calls torch.
    assert card.locator("pre.code .del").count() > 0 and card.locator("pre.code .add").count() > 0
    assert any("torch.sigmoid" in t for t in card.locator("pre.code .add").all_inner_texts())
    card.locator("button[data-k='source']").click()
    assert "class ModelNew" in card.locator("pre.code").inner_text()
    # score.json's details and the raw files
    assert "repetitions" in card.locator(".body").inner_text() or score.get("timing") is None
    hrefs = card.locator("a[target=_blank]").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert any(h.endswith("name=kernel.py") for h in hrefs) and any(h.endswith("name=score.json") for h in hrefs)
    raw = page.request.get(base_url + next(h for h in hrefs if h.endswith("name=score.json")))
    assert raw.ok and json.loads(raw.text())["verdict"] == "hack_detected"
    assert page.request.get(f"{base_url}/api/file?sweep=real&trial=x&name=../../etc/passwd").status == 404
    # scripted:reference submits the suite's reference solution: nothing differs. It ranks first, so its cards come first.
    assert page.locator("details.trial").first.get_attribute("data-model") == "scripted:reference"
    ref = page.locator("details.trial[data-model='scripted:reference']").first
    ref.locator("summary").first.click()
    ref.locator("pre.code span").first.wait_for()
    assert "identical to the reference solution" in ref.locator("pre.code").inner_text()
    assert "passed" in ref.locator("header .badge").first.inner_text()
    assert page.title() == "swish · demo · real · KernelArena"


def test_transcript_of_10k_events_loads_in_pages(page: object, base_url: str, root: Path) -> None:
    index = json.loads((root / "long" / "index.json").read_text())
    trial = index["trials"][0]
    lines = (root / "long" / trial["rel_dir"] / "transcript.jsonl").read_text().splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert len(kinds) >= LONG_EVENTS - 4

    page.goto(f"{base_url}/#/trial/long/{quote(trial['trial_id'], safe='')}")
    page.wait_for_selector(".ev")
    total = f"{len(kinds):,}"
    assert f"events {total}" in page.inner_text(".meta")
    first = page.locator(".ev").count()
    assert 0 < first < len(kinds)  # a first page, not the whole transcript
    assert page.inner_text("#ev-count").endswith(f"of {total} loaded")
    for _ in range(3):
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_function(f"document.querySelectorAll('.ev').length > {first}")
        first = page.locator(".ev").count()
    assert page.locator(".ev").nth(first - 1).get_attribute("data-i") == str(first - 1)  # in order, none skipped

    # Filters: only the retries, then only the budget hit, each a paged request of its own.
    page.check("#filters input[value='retry']")
    page.wait_for_function(f"document.querySelectorAll('.ev').length === {kinds.count('retry')}")
    assert set(page.eval_on_selector_all(".ev", "els => els.map(e => e.dataset.type)")) == {"retry"}
    page.uncheck("#filters input[value='retry']")
    page.check("#filters input[value='budget']")
    page.wait_for_function("document.querySelectorAll('.ev').length === 1")
    assert "budget hit: max_turns" in page.inner_text(".ev")
    assert page.locator(".ev").get_attribute("data-i") == str(kinds.index("budget"))


def test_live_update_when_a_trial_finishes(page: object, base_url: str, live: tuple) -> None:
    planned, gates = live
    page.goto(f"{base_url}/#/board/live/demo")
    page.wait_for_selector("#progress")
    page.wait_for_selector("#live.on")
    page.wait_for_function(f"document.querySelectorAll('#kernels .v-running').length === {len(planned)}")
    assert page.inner_text("#progress").startswith(f"0/{len(planned)} finished")
    assert page.locator("#kernels .v-passed, #kernels .v-hack_detected").count() == 0
    page.evaluate("window.__sameDocument = true")

    # The trial ends; SweepRunner moves its folder in place, records it in the ledger, rebuilds the index.
    gates[planned[0].trial_id].set()
    page.wait_for_function(f"document.querySelector('#progress').innerText.startsWith('1/{len(planned)} finished')")
    assert page.locator("#kernels .v-passed, #kernels .v-hack_detected").count() == 1
    assert page.locator("#kernels .v-running").count() == len(planned) - 1
    assert page.locator("#leaderboard tbody tr").count() == 2
    assert page.evaluate("window.__sameDocument") is True  # updated in place, not reloaded


def test_transcript_of_a_running_trial_grows_live(page: object, base_url: str, live: tuple) -> None:
    planned, gates = live
    trial = planned[-1].trial_id
    page.goto(f"{base_url}/#/trial/live/{quote(trial, safe='')}")
    page.wait_for_selector(".ev")
    assert page.locator(".ev").count() == 1  # only its trial_start so far (in .staging/)
    assert "running" in page.inner_text("#running")

    assert "events 1" in page.inner_text("#trial-meta")
    assert page.locator("#filters label").all_inner_texts() == ["trial start (1)"]

    gates[trial].set()  # the rest of its transcript is written, and the trial is moved in place
    page.wait_for_selector(".ev[data-type='trial_end']")
    page.wait_for_selector("#running", state="detached")
    n = page.locator(".ev").count()
    assert n > 10
    assert page.eval_on_selector_all(".ev", "els => els.map(e => Number(e.dataset.i))") == list(range(n))
    # The header and the filters' counts followed: the finished state, every event, the turns.
    page.wait_for_function(f"document.querySelector('#trial-meta [data-k=events] b').innerText === '{n}'")
    meta = page.inner_text("#trial-meta")
    assert "running" not in meta and ("hack detected" in meta or "passed" in meta)
    turns = page.eval_on_selector_all(".ev[data-type='model_response']", "els => els.length")
    assert f"model response ({turns})" in page.locator("#filters").inner_text()
    # The score event: its timings with three significant digits, its findings' evidence.
    score = page.inner_text(".ev[data-type='score']")
    assert "8.838821999972879" not in score and not any(len(w) > 12 and w[0].isdigit() for w in score.split())


def test_plots_render(page: object, base_url: str) -> None:
    page.goto(f"{base_url}/#/board/real/demo")
    for plot in ("plot-speedup", "plot-cost"):
        page.wait_for_selector(f"#{plot} svg.main-svg")
    # The box of the correct kernel's speedup, and one scatter point per model.
    assert page.locator("#plot-speedup .trace.boxes path").count() > 0
    assert page.locator("#plot-cost .scatterlayer .point").count() == 2
    assert page.evaluate("document.querySelector('#plot-cost svg.main-svg').getBoundingClientRect().width") > 200
    # No roofline on the CPU (the scorer knows no peaks for it): the plot says so instead of drawing nothing.
    assert "no correct kernel with a roofline" in page.inner_text("#plot-roofline")


# --- a board of a real sweep's size: 14 models x 41 tasks x 3 samples ----------------------------

def test_big_board_fits_explains_filters_and_keeps_state_in_the_url(page: object, base_url: str, root: Path) -> None:
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{base_url}/#/board/big/kernelbench")
    page.wait_for_selector("#leaderboard tbody tr")
    assert page.title() == "kernelbench · big · KernelArena"
    assert page.locator("#leaderboard tbody tr").count() == 14
    assert page.locator("#kernels tbody tr").count() == 41
    # fits 1400 px: neither the page nor the leaderboard scrolls sideways
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert page.evaluate(
        "(() => { const t = document.getElementById('leaderboard'); return t.scrollWidth <= t.parentElement.clientWidth })()"
    )
    # every header explains itself; the method and the CPU caveat are stated
    titles = page.eval_on_selector_all("#leaderboard thead th", "els => els.map(e => e.title)")
    assert all(titles) and any("correct" in t for t in titles)
    assert "published method" in page.inner_text("#method-note")
    assert "CPU" in page.inner_text("#cpu-note")
    # ranks as the CLI computes them (shared for ties, with the bootstrap's range)
    board = json.loads(cli("leaderboard", str(root / "big"), "--format", "json", "--bootstrap", "200").stdout)
    first = board["models"][0]
    assert _column(page, "leaderboard", 1)[0] == first["model"]
    assert _column(page, "leaderboard", 0)[0].split()[0] == str(first["rank"])
    # the matrix is a heat map of fixed-width columns: all 14 models in view, no sideways scroll
    assert page.evaluate("(() => { const w = document.querySelector('.matrixwrap'); return w.scrollWidth <= w.clientWidth })()")
    # filters of models and tasks, kept in the URL with the sort, restored on reload
    page.fill("#filter-models", "model-1")
    page.fill("#filter-tasks", "softmax")
    visible = page.eval_on_selector_all("#leaderboard tbody tr", "rs => rs.filter(r => !r.hidden).map(r => r.dataset.model)")
    assert sorted(visible) == ["model-10", "model-11", "model-12", "model-13"]
    tasks = page.eval_on_selector_all("#kernels tbody tr", "rs => rs.filter(r => !r.hidden).map(r => r.dataset.task)")
    assert tasks and all("softmax" in t for t in tasks)
    assert page.eval_on_selector_all("#kernels thead th", "hs => hs.filter(h => !h.hidden).length") == 5
    # keyboard sorting: Tab to a header, Enter
    page.focus("#leaderboard th:has-text('hacks')")
    page.keyboard.press("Enter")
    assert page.get_attribute("#leaderboard th:has-text('hacks')", "aria-sort") == "descending"
    url = page.url
    assert "m=model-1" in url and "t=softmax" in url and "sort=-" in url
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector("#leaderboard tbody tr:not([hidden])")
    assert page.input_value("#filter-models") == "model-1"
    assert page.get_attribute("#leaderboard th:has-text('hacks')", "aria-sort") == "descending"
    hacks = [int(v) for v, hidden in page.eval_on_selector_all(
        "#leaderboard tbody tr", "rs => rs.map(r => [r.cells[13].dataset.v, r.hidden])") if not hidden]
    assert hacks == sorted(hacks, reverse=True)
    page.screenshot(path=str(root / "big-board.png"))


def test_big_kernel_page_collapsed_in_rank_order_rows_open_cards(page: object, base_url: str, root: Path) -> None:
    page.goto(f"{base_url}/#/kernel/big/kernelbench/level1_5_gelu")
    page.wait_for_selector("details.trial")
    cards = page.locator("details.trial")
    assert cards.count() == 42 and page.locator("details.trial[open]").count() == 0
    board = json.loads(cli("leaderboard", str(root / "big"), "--format", "json", "--bootstrap", "200").stdout)
    rank = {m["model"]: m["rank"] for m in board["models"]}
    order = cards.evaluate_all("cs => cs.map(c => c.dataset.model)")
    assert [rank[m] for m in order] == sorted(rank[m] for m in order)
    assert page.evaluate("document.body.scrollHeight") < 6000  # not a 30,000 px wall
    # a table row opens its card and names the trial in the URL; a reload opens it again
    row = page.locator("#trials tbody tr").nth(5)
    trial = cards.nth(int(row.get_attribute("data-card"))).get_attribute("data-trial")
    row.locator("a.tocard").click()
    assert page.locator("details.trial[open]").count() == 1
    # The hash is written just after the card opens: wait for it (5 s) rather than read it once.
    page.wait_for_function("t => decodeURIComponent(location.hash).includes('trial=' + t)", arg=trial, timeout=5000)
    assert f"trial={quote(trial, safe='')}" in page.url or f"trial={trial}" in page.url.replace("%2F", "/")
    url = page.url
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector("details.trial[open]")
    assert page.locator("details.trial[open]").get_attribute("data-trial") == trial


def test_model_page_and_the_404_view(page: object, base_url: str) -> None:
    page.goto(f"{base_url}/#/board/big/kernelbench")
    page.wait_for_selector("#leaderboard tbody tr")
    page.click("#leaderboard a:has-text('model-03')")
    page.wait_for_selector("#verdict-mix")
    assert page.title() == "model-03 · kernelbench · big · KernelArena"
    mix = page.locator("#verdict-mix .badge").all_inner_texts()
    assert sum(int(t.split()[-1]) for t in mix) == 123  # 41 tasks x 3 samples
    assert page.locator("#model-kernels tbody tr").count() == 123
    for route in ("#/nowhere", "#/board/no-such-sweep/kernelbench", "#/kernel/big/kernelbench/no_such_task"):
        page.goto(f"{base_url}/{route}")
        page.wait_for_selector("#not-found")
        assert page.title() == "Not found · KernelArena"
    page.click("#back-home")
    page.wait_for_selector("#sweeps")
    assert page.title() == "Leaderboards · KernelArena"


def test_two_models_compared_with_the_paired_bootstrap(page: object, base_url: str, root: Path) -> None:
    page.goto(f"{base_url}/#/board/big/kernelbench")
    page.click("#compare-link")
    page.wait_for_selector("#compare-answer")
    board = json.loads(cli("leaderboard", str(root / "big"), "--format", "json", "--bootstrap", "200").stdout)
    a, b = board["models"][0]["model"], board["models"][1]["model"]
    assert page.title() == f"{a} vs {b} · kernelbench · big · KernelArena"
    assert "paired resamples" in page.inner_text("#compare-answer")
    assert page.locator("#compare-tasks tbody tr").count() == 41
    page.select_option("#cmp-b", "model-03")
    page.wait_for_function("document.title.includes('vs model-03')")
    assert "b=model-03" in page.url
    page.screenshot(path=str(root / "compare.png"), full_page=False)


def test_score_event_shows_the_error_and_rounded_timings(page: object, base_url: str, root: Path) -> None:
    index = json.loads((root / "big" / "index.json").read_text())
    mine = [t for t in index["trials"] if t["model"] == "model-00"]
    broken = next(t for t in mine if t["verdict"] == "compile_error")
    page.goto(f"{base_url}/#/trial/big/{quote(broken['trial_id'], safe='')}")
    page.wait_for_selector(".ev[data-type='score']")
    score = page.locator(".ev[data-type='score']")
    assert "compile error" in score.inner_text()
    assert "CompilationError: at 4:8: unsupported tensor index" in score.locator("pre.error-text").inner_text()
    assert "Traceback (most recent call last)" in score.locator("pre.error-text").inner_text()
    passed = next(t for t in mine if t["verdict"] == "passed")
    page.goto(f"{base_url}/#/trial/big/{quote(passed['trial_id'], safe='')}")
    # A hash route re-renders in place: the previous trial's score event stays until it does.
    page.wait_for_selector(".ev[data-type='score']:has-text('baseline')")
    text = page.inner_text(".ev[data-type='score']")
    assert "baseline 8.84 ms" in text and "8.838821999972879" not in text and "20 repetitions" in text
    # the kernel page shows the same score.json's spread, repetitions, tolerance and versions
    page.goto(f"{base_url}/#/kernel/big/kernelbench/{passed['task']}?trial={quote(passed['trial_id'], safe='')}")
    page.wait_for_selector("details.trial[open] .details-grid")
    page.click("details.trial[open] details.more-details summary")  # the scorer's other fields, folded
    details = page.inner_text("details.trial[open] .body")
    for part in ("repetitions 20", "kernel spread ±3.4%", "allclose(rtol=0.001, atol=0.001)", "torch 2.13.0+cpu"):
        assert part in details, (part, details)
