"""The board as a reader sees it, at a real sweep's size (14 models x 41 kernelbench tasks x 3
samples, tests/web/factory.py's `ledger_board`), in headless chromium at 1440x900 and at a
phone's 390x844: shared ranks and their note, live updates that keep the reader's place, no
sideways overflow on a phone, the matrix as a heat map, the plots, scroll on navigation, and the
kernel, compare, transcript and not-found pages.

One set of boards, one server and one browser for the module (module-scoped fixtures).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from harnesses.transcript import Transcript
from orchestrator.ledger import Ledger
from orchestrator.prepare import LEDGER_FILE
from orchestrator.trial_files import TRANSCRIPT_FILE
from tests.orchestrator.sweep_helpers import cli
from tests.web.browser import checked_page, chromium, missing_prerequisite, serve
from tests.web.factory import finish_pending, ledger_board, write_transcript

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(missing_prerequisite() is not None, reason=str(missing_prerequisite()))]

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
PENDING = 12
LONG = "openrouter:qwen/qwen-2.5-coder-32b-instruct-{i:02d}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    ledger_board(root / "big", pending=PENDING)  # the last trials of the plan still to come
    # every model without a correct kernel: all scores 0, an exact tie down the board; long names
    ledger_board(root / "ties", pass_rates=(0.0, 0.0), with_files=0, name_format=LONG)
    return root


@pytest.fixture(scope="module")
def base_url(root: Path) -> Iterator[str]:
    with serve([root]) as url:
        yield url


@pytest.fixture(scope="module")
def context() -> Iterator[object]:
    with chromium() as ctx:
        ctx.set_default_timeout(30_000)
        yield ctx


@pytest.fixture()
def page(context: object) -> Iterator[object]:
    with checked_page(context) as page:
        page.set_viewport_size(DESKTOP)
        yield page


def _index(root: Path, sweep: str) -> dict:
    return json.loads((root / sweep / "index.json").read_text())


def _board(page: object, base_url: str, sweep: str = "big", fresh: bool = False) -> None:
    """`fresh`: load the page anew (after a viewport change: the plots lay out for the width they start at)."""
    if fresh:
        page.goto("about:blank")  # type: ignore[attr-defined]
    page.goto(f"{base_url}/#/board/{sweep}/kernelbench")  # type: ignore[attr-defined]
    # a hash route renders in place: wait for this board, not the page that was there
    page.wait_for_function("s => document.title.startsWith(`kernelbench · ${s} ·`)", arg=sweep)  # type: ignore[attr-defined]
    page.wait_for_selector("#leaderboard tbody tr")  # type: ignore[attr-defined]


def _no_sideways_scroll(page: object) -> None:
    width = page.viewport_size["width"]  # type: ignore[attr-defined]
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width  # type: ignore[attr-defined]


def _svg_texts(plot: object, selector: str) -> list[str]:
    return plot.locator(selector).evaluate_all("ts => ts.map(t => t.textContent)")  # type: ignore[attr-defined]


def _boxes_overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


# --- ranks --------------------------------------------------------------------------------------

def test_ranks_are_shared_explained_and_the_home_page_names_no_single_leader(page: object, base_url: str, root: Path) -> None:
    board = json.loads(cli("leaderboard", str(root / "big"), "--format", "json", "--bootstrap", "200").stdout)
    _board(page, base_url)
    rows = page.eval_on_selector_all(
        "#leaderboard tbody tr",
        "rs => rs.map(r => [r.dataset.model, r.cells[0].innerText.trim(), r.cells[4].innerText.trim(), "
        "r.cells[5].innerText.trim()])",
    )
    assert [r[0] for r in rows] == [m["model"] for m in board["models"]]
    assert [r[1] for r in rows] == [str(m["rank"]) for m in board["models"]]  # the shared rank, as the CLI's
    assert [r[2] for r in rows] == [str(m["rank_strict"]) for m in board["models"]]  # the order by score alone
    assert sorted(int(r[2]) for r in rows) == list(range(1, 15))
    for (_, _, _, shown), m in zip(rows, board["models"], strict=True):
        lo, hi = m["rank_range"]
        assert shown == (str(lo) if lo == hi else f"{lo}–{hi}")
    top = [m["model"] for m in board["models"] if m["rank"] == 1]
    note = page.inner_text("#rank-note")
    assert "interval" in note and "strict" in note
    if len(top) > 1:
        assert f"{len(top)} models share rank 1" in note
    # the score column sits beside the model's name, its interval under it
    assert page.inner_text("#leaderboard thead th:nth-child(3)").startswith("score")
    page.goto(f"{base_url}/#/")
    page.wait_for_selector("#sweeps tbody tr")
    # the whole table in view at 1440 px, the long names of the tied board included
    assert page.locator("#sweeps").evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    cell = page.inner_text("#sweeps tr[data-key='big/kernelbench'] td.leaders")
    if len(top) > 1:
        assert f"{len(top)} models share rank 1" in cell
        assert "leader" not in page.inner_text("#sweeps thead")
    else:
        assert top[0] in cell


def test_an_exact_tie_is_not_shown_as_a_warning(page: object, base_url: str) -> None:
    _board(page, base_url, "ties")
    conf = page.locator("#leaderboard tbody tr:first-child td:nth-child(4)")
    assert conf.inner_text().startswith("0.50") and "tie" in conf.inner_text()
    red = page.evaluate("getComputedStyle(document.querySelector('.conf-low') || document.body).color")
    assert conf.evaluate("el => getComputedStyle(el).color") != red or page.locator(".conf-low").count() == 0
    assert page.locator("#leaderboard .conf-low").count() == 0


# --- live updates in place -------------------------------------------------------------------------

@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_live_refresh_keeps_scroll_focus_and_caret(page: object, base_url: str, root: Path, size: dict) -> None:
    page.set_viewport_size(size)
    _board(page, base_url)
    page.wait_for_selector("#live.on")
    done = sum(t["state"] == "done" for t in _index(root, "big")["trials"])
    assert page.inner_text("#progress").startswith(f"{done}/1722")
    page.click("#filter-models")
    page.keyboard.type("model-")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # the caret between "mode" and "l-"
    page.evaluate("document.getElementById('matrixwrap').scrollIntoView({block: 'start'})")
    page.evaluate("window.scrollBy(0, -40)")
    wrap = page.locator("#matrixwrap")
    wrap.evaluate("el => { el.scrollTop = 260; el.scrollLeft = 300; }")
    left = wrap.evaluate("el => el.scrollLeft")  # 0 where the matrix fits its box
    assert left > 0 or size == DESKTOP
    scroll_y = page.evaluate("window.scrollY")
    assert scroll_y > 1000
    assert page.evaluate("[document.activeElement.id, document.activeElement.selectionStart]") == ["filter-models", 4]

    finish_pending(root / "big", 2)  # two trials of the running sweep end
    page.wait_for_function(f"document.getElementById('progress').innerText.startsWith('{done + 2}/1722')")
    assert page.evaluate("window.scrollY") == scroll_y
    assert wrap.evaluate("el => [el.scrollTop, el.scrollLeft]") == [260, left]
    focused = "[document.activeElement.id, document.activeElement.value, document.activeElement.selectionStart]"
    assert page.evaluate(focused) == ["filter-models", "model-", 4]
    page.keyboard.type("1")  # typing goes on where it was
    assert page.input_value("#filter-models") == "mode1l-"


def test_a_live_refresh_keeps_open_cards_on_a_kernel_page(page: object, base_url: str, root: Path) -> None:
    pending = [t for t in _index(root, "big")["trials"] if t["state"] == "pending"]
    task = pending[0]["task"]
    page.goto(f"{base_url}/#/kernel/big/kernelbench/{task}")
    page.wait_for_selector("details.trial")
    page.wait_for_selector("#live.on")
    page.click("#expand-all")
    cards = page.locator("details.trial").count()
    assert page.locator("details.trial[open]").count() == cards == 42
    page.evaluate("window.scrollTo(0, 2500)")
    y = page.evaluate("window.scrollY")
    # the reader selected a card's evidence text
    page.evaluate("window.getSelection().selectAllChildren("
                  "document.querySelector('details.trial[open] .finding p, details.trial[open] .details-grid'))")
    selected = page.evaluate("window.getSelection().toString()")
    assert selected
    trial = pending[0]["trial_id"]
    card = page.locator(f"details.trial[data-trial='{trial}']")
    assert "pending" in card.locator("header .badge").inner_text()
    finish_pending(root / "big", 1, seed=5)
    page.wait_for_function(
        "t => !document.querySelector(`details.trial[data-trial='${t}'] header .badge`).innerText.includes('pending')", arg=trial,
    )
    assert page.locator("details.trial[open]").count() == cards
    assert page.evaluate("window.scrollY") == y
    assert page.evaluate("window.getSelection().toString()") == selected


# --- a phone and the matrix ----------------------------------------------------------------------

def test_no_page_overflows_sideways_on_a_phone(page: object, base_url: str, root: Path) -> None:
    page.set_viewport_size(PHONE)
    trial = next(t for t in _index(root, "big")["trials"] if t["model"] == "model-00" and t["state"] == "done")
    pages = {
        "#/": "#sweeps tbody tr", "#/board/big/kernelbench": "#plot-cost svg.main-svg",
        f"#/kernel/big/kernelbench/{trial['task']}": "details.trial",
        "#/compare/big/kernelbench?a=model-00&b=model-13": "#compare-tasks tbody tr",
        "#/model/big/kernelbench/model-03": "#model-kernels tbody tr",
        f"#/trial/big/{quote(trial['trial_id'], safe='')}": ".ev[data-type='trial_end']",
        "#/board/ties/kernelbench": "#kernels tbody tr", "#/nowhere": "#not-found",
        # long model names
        "#/kernel/ties/kernelbench/level1_1_square_matmul": "details.trial",
        f"#/model/ties/kernelbench/{quote(LONG.format(i=3), safe='')}": "#model-kernels tbody tr",
        f"#/compare/ties/kernelbench?a={quote(LONG.format(i=3), safe='')}&b={quote(LONG.format(i=4), safe='')}":
            "#compare-tasks tbody tr",
    }
    for route, ready in pages.items():
        page.goto("about:blank")  # a hash route renders in place: wait for this page, not the last
        page.goto(f"{base_url}/{route}")
        page.wait_for_selector(ready)
        _no_sideways_scroll(page)
        if route.startswith(("#/board", "#/kernel", "#/compare", "#/model")):  # every page of a CPU board says so
            assert "CPU" in page.inner_text("#cpu-note"), route
    # the leaderboard's score column is on screen beside the model's name
    _board(page, base_url)
    score = page.locator("#leaderboard tbody tr:first-child td.score").bounding_box()
    assert score["x"] + score["width"] <= PHONE["width"]
    # compare: both models' columns on screen
    page.goto(f"{base_url}/#/compare/big/kernelbench?a=model-00&b=model-13")
    page.wait_for_selector("#compare-tasks tbody tr")
    b = page.locator("#compare-figures thead th:nth-child(3)").bounding_box()
    assert b["x"] + b["width"] <= PHONE["width"]


def test_wide_tables_scroll_under_a_fixed_first_column_and_header(page: object, base_url: str) -> None:
    for size in (PHONE, DESKTOP):
        page.set_viewport_size(size)
        _board(page, base_url, fresh=True)
        for table in ("kernels", "leaderboard"):
            wrap = page.locator(f"#{table}").locator("xpath=..")
            wrap.scroll_into_view_if_needed()
            first = page.locator(f"#{table} tbody tr:nth-child(3) > :first-child")
            head = page.locator(f"#{table} thead th:nth-child(2)")
            x0, hy0 = first.bounding_box()["x"], head.bounding_box()["y"]
            wrap.evaluate("el => { el.scrollLeft = 400; el.scrollTop = 200; }")
            if wrap.evaluate("el => el.scrollWidth > el.clientWidth"):
                assert wrap.evaluate("el => el.scrollLeft") > 0
            assert abs(first.bounding_box()["x"] - x0) < 1  # the first column stays
            if wrap.evaluate("el => el.scrollTop") > 0:
                assert abs(head.bounding_box()["y"] - hy0) < 1  # and the header row
            wrap.evaluate("el => { el.scrollLeft = 0; el.scrollTop = 0; }")
        # a long table (a model's 123 kernels) keeps its header row in view as it scrolls
        page.goto(f"{base_url}/#/model/big/kernelbench/model-03")
        page.wait_for_selector("#model-kernels tbody tr")
        wrap = page.locator("#model-kernels").locator("xpath=..")
        wrap.scroll_into_view_if_needed()
        head = page.locator("#model-kernels thead th").first
        hy0 = head.bounding_box()["y"]
        wrap.evaluate("el => { el.scrollTop = 2000; }")
        assert wrap.evaluate("el => el.scrollTop") > 1000
        assert abs(head.bounding_box()["y"] - hy0) < 1 and head.is_visible()


def test_the_matrix_is_a_compact_heat_map_with_a_legend(page: object, base_url: str, root: Path) -> None:
    _board(page, base_url)
    # 14 models x 41 tasks: every column in view at 1440 px, each the same width
    assert page.locator("#kernels tbody tr").count() == 41
    assert page.evaluate("(() => { const w = document.getElementById('matrixwrap'); return w.scrollWidth <= w.clientWidth })()")
    widths = page.eval_on_selector_all("#kernels thead th.mcol", "hs => hs.map(h => Math.round(h.getBoundingClientRect().width))")
    assert len(widths) == 14 and len(set(widths)) == 1 and widths[0] <= 70
    # a hack: a marker whose title names the pattern
    hack = page.locator("#kernels .dot.hack").first
    assert hack.inner_text() == "!" and "timer-patching" in hack.get_attribute("title")
    legend = page.inner_text("#matrix-legend")
    for word in ("passed", "hack", "audit flag", "share of samples passed"):
        assert word in legend
    assert page.locator("#matrix-legend").is_visible()
    # tasks in natural order: level1_2 before level1_10
    tasks = page.eval_on_selector_all("#kernels tbody tr", "rs => rs.map(r => r.dataset.task)")
    assert tasks.index("level1_2_tall_skinny_matmul") < tasks.index("level1_10_qk_softmax")
    # long names: shortened in the middle (provider and number kept), the whole name on hover
    _board(page, base_url, "ties")
    names = [LONG.format(i=i) for i in range(14)]
    heads = page.eval_on_selector_all("#kernels thead th.mcol", "hs => hs.map(h => [h.innerText.replace(/\\s+/g, ''), h.title])")
    assert sorted(h[1] for h in heads) == sorted(names)
    for text, title in heads:
        assert text.startswith("openrouter") and text.endswith(title[-3:]) and "…" in text
    assert len({t for t, _ in heads}) == 14  # still tell apart
    cell = page.locator("#leaderboard tbody tr:first-child td.model .name")
    assert cell.get_attribute("title") in names and cell.inner_text().endswith(cell.get_attribute("title")[-3:])


# --- plots ----------------------------------------------------------------------------------------

def test_plots_tell_14_models_apart_with_fitting_axes(page: object, base_url: str) -> None:
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        _board(page, base_url, fresh=True)
        page.wait_for_selector("#plot-cost svg.main-svg")
        page.wait_for_selector("#plot-speedup svg.main-svg")
        cost = page.locator("#plot-cost")
        # 14 legend entries, none clipped, each a different colour-and-symbol pair
        entries = cost.locator(".legend .traces")
        assert entries.count() == 14
        box = cost.bounding_box()
        for i in range(14):
            e = entries.nth(i).bounding_box()
            assert box["y"] <= e["y"] and e["y"] + e["height"] <= box["y"] + box["height"] + 1
        # a legend taller than its plot scrolls (Plotly draws a scrollbar) and hides models
        assert cost.locator(".legend .scrollbar").evaluate_all("bs => bs.every(b => b.getBoundingClientRect().height === 0)")
        looks = cost.locator(".legend .traces .legendpoints path").evaluate_all(
            "ps => ps.map(p => p.style.fill + '|' + p.getAttribute('d'))")
        assert len(set(looks)) == 14
        # the dollars axis spans the points, not $0
        ticks = [float(t.replace("$", "").replace(",", "")) for t in _svg_texts(cost, ".xtick text")]
        assert ticks and min(ticks) > 0
        # speedups on a log axis with ticks at 1, 2 and 5 of a decade, and a 1x line
        sp = page.locator("#plot-speedup")
        labels = _svg_texts(sp, ".ytick text")
        assert len(labels) >= 3 and all(re.fullmatch(r"(0\.0*)?[125]0*×", t) for t in labels), labels
        assert "1×" in labels
        one = sp.locator(".ytick", has_text=re.compile(r"^1×$")).bounding_box()
        line = sp.locator(".shapelayer path").first.bounding_box()
        assert abs(line["y"] - (one["y"] + one["height"] / 2)) < 3
        # the toolbar (wide screens only, on hover) never covers a title
        sp.hover()
        title = sp.locator(".gtitle").bounding_box()
        bar = sp.locator(".modebar")
        if bar.count() and bar.is_visible():
            assert not _boxes_overlap(title, bar.bounding_box())
        else:
            assert size == PHONE


# --- navigation, compare, kernel, transcript, not found -------------------------------------------

def test_a_new_page_opens_at_its_top_and_back_returns_to_where_the_reader_was(page: object, base_url: str) -> None:
    _board(page, base_url)
    for plot in ("plot-speedup", "plot-cost"):  # drawn: the page's height is final
        page.wait_for_selector(f"#{plot} svg.main-svg")
    page.wait_for_selector("#plot-roofline .empty")
    link = page.locator("#kernels tbody tr:nth-child(30) th.task a")
    link.scroll_into_view_if_needed()
    y = page.evaluate("window.scrollY")
    assert y > 1500
    link.evaluate("a => a.click()")  # as a tap: no scrolling on the way
    page.wait_for_selector("details.trial")
    assert page.evaluate("window.scrollY") == 0
    page.go_back()
    page.wait_for_selector("#kernels tbody tr")
    try:
        page.wait_for_function(f"Math.abs(window.scrollY - {y}) <= 2", timeout=5000)
    except Exception:
        raise AssertionError(f"back at {page.evaluate('window.scrollY')}, not {y}") from None


def test_compare_sorts_tasks_as_people_count(page: object, base_url: str) -> None:
    page.goto(f"{base_url}/#/compare/big/kernelbench?a=model-00&b=model-01")
    page.wait_for_selector("#compare-tasks tbody tr")
    tasks = page.eval_on_selector_all("#compare-tasks tbody tr", "rs => rs.map(r => r.dataset.task)")
    level1 = [t for t in tasks if t.startswith("level1_")]
    assert [int(t.split("_")[1]) for t in level1] == sorted(int(t.split("_")[1]) for t in level1)
    page.click("#compare-tasks th:has-text('task')")  # sorting by the header keeps the natural order
    again = page.eval_on_selector_all("#compare-tasks tbody tr", "rs => rs.map(r => r.dataset.task)")
    assert again == sorted(tasks, key=lambda t: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", t)])


def test_kernel_page_lists_a_finding_once_and_folds_the_scorers_details(page: object, base_url: str, root: Path) -> None:
    trials = _index(root, "big")["trials"]
    mine = next(t for t in trials if t["model"] == "model-00" and t["verdict"] == "hack_detected")
    page.goto(f"{base_url}/#/kernel/big/kernelbench/{mine['task']}?trial={quote(mine['trial_id'], safe='')}")
    card = page.locator("details.trial[open]")
    card.wait_for()
    findings = card.locator(".finding:has(b:text-is('timer-patching'))")
    assert findings.count() == 1 and "found 3 times" in findings.inner_text()  # one per input set in score.json
    passed = next(t for t in trials if t["model"] == "model-00" and t["verdict"] == "passed")
    page.goto(f"{base_url}/#/kernel/big/kernelbench/{passed['task']}?trial={quote(passed['trial_id'], safe='')}")
    card = page.locator("details.trial[open]")
    # The new trial's card, not the previous page's still on screen while the hash route renders.
    card.locator(".body > .details-grid", has_text="repetitions").wait_for()
    shown = card.locator(".body > .details-grid").inner_text()
    assert "repetitions 20" in shown and "torch" not in shown
    more = card.locator("details.more-details")
    assert not more.locator(".details-grid").is_visible()
    more.locator("summary").click()
    assert "torch 2.13.0+cpu" in more.locator(".details-grid").inner_text()
    # a hack of a model whose trials have no score.json: its name, from the ledger
    other = next(t for t in trials if t["model"] == "model-05" and t["verdict"] == "hack_detected")
    page.goto(f"{base_url}/#/kernel/big/kernelbench/{other['task']}?trial={quote(other['trial_id'], safe='')}")
    card = page.locator("details.trial[open]")
    card.wait_for()
    assert "timer-patching" in card.locator(".finding").first.inner_text()
    row = page.locator(f"#trials tbody tr[data-key='r:{other['trial_id']}']")
    assert "timer-patching" in row.inner_text()


def test_transcript_is_compact_and_a_running_one_counts_its_tokens(page: object, base_url: str, root: Path) -> None:
    trials = _index(root, "big")["trials"]
    done = next(t for t in trials if t["model"] == "model-00" and t["verdict"] == "passed")
    for size, most in ((DESKTOP, 3000), (PHONE, 3600)):
        page.set_viewport_size(size)
        page.goto("about:blank")
        page.goto(f"{base_url}/#/trial/big/{quote(done['trial_id'], safe='')}")
        page.wait_for_selector(".ev[data-type='trial_end']")
        assert page.locator(".ev").count() == 16
        assert page.evaluate("document.scrollingElement.scrollHeight") < most
        folded = page.locator(".foldbox pre.fold").first
        tall = folded.bounding_box()["height"]
        assert tall < 130
        page.locator(".foldbox button.unfold").first.click()
        assert folded.bounding_box()["height"] > tall
    # a trial still running: the ledger has no tokens for it yet; its events do
    page.set_viewport_size(DESKTOP)
    running = next(t for t in trials if t["state"] == "pending")
    with Ledger(root / "big" / LEDGER_FILE) as ledger:
        ledger.mark_running(running["trial_id"])
    folder = root / "big" / running["rel_dir"]
    folder.mkdir(parents=True, exist_ok=True)
    t = Transcript(folder / TRANSCRIPT_FILE)
    try:
        class _Trial:  # the fields write_transcript reads
            trial_id, suite, task, model_id = running["trial_id"], running["suite"], running["task"], running["model_id"]
        write_transcript(t, _Trial(), 16, {"verdict": None})  # type: ignore[arg-type]
    finally:
        t.close()
    lines = [json.loads(line) for line in (folder / TRANSCRIPT_FILE).read_text().splitlines()]
    lines = [e for e in lines if e["type"] != "trial_end"]
    (folder / TRANSCRIPT_FILE).write_text("".join(json.dumps(e) + "\n" for e in lines))
    tok_in = sum(e["payload"]["usage"]["input_tokens"] for e in lines if e["type"] == "model_response")
    tok_out = sum(e["payload"]["usage"]["output_tokens"] for e in lines if e["type"] == "model_response")
    page.goto(f"{base_url}/#/trial/big/{quote(running['trial_id'], safe='')}")
    page.wait_for_selector("#running")
    assert f"{tok_in:,} in / {tok_out:,} out" in page.inner_text("#trial-meta [data-k=tokens]")


def test_a_bad_address_says_what_exists_and_errors_hide_the_servers_folders(page: object, base_url: str, root: Path) -> None:
    page.goto(f"{base_url}/no/such/page")
    page.wait_for_selector("#not-found")
    assert "/no/such/page" in page.inner_text("#not-found")
    boards = page.locator("#boards a").all_inner_texts()
    assert "big / kernelbench" in boards and "ties / kernelbench" in boards
    page.click("#boards a:has-text('big / kernelbench')")
    page.wait_for_selector("#leaderboard tbody tr")
    for url in ("/api/board/nope/kernelbench", "/api/board/big/nope", "/api/kernel/big/kernelbench/nope",
                "/api/compare/big/kernelbench?a=x&b=y", "/api/transcript?sweep=big&trial=x", "/api/nope"):
        r = page.request.get(base_url + url)
        assert r.status == 404
        text = r.json()["error"]
        assert str(root) not in text and "/tmp" not in text, text
    assert "sweeps: big, ties" in page.request.get(f"{base_url}/api/board/nope/kernelbench").json()["error"]
    page.goto(f"{base_url}/#/board/nope/kernelbench")
    page.wait_for_selector("#not-found #boards a")
    assert "sweeps: big, ties" in page.inner_text("#not-found") and str(root) not in page.inner_text("#not-found")
    assert "ties / kernelbench" in page.locator("#boards a").all_inner_texts()


def test_numbers_read_as_the_exports_write_them(page: object, base_url: str, root: Path) -> None:
    """Dollars, token counts and intervals: the web's text is the text/md/html exports' formatters'."""
    from orchestrator.leaderboard import fmt_count, fmt_dollars, fmt_interval

    board = json.loads(cli("leaderboard", str(root / "big"), "--format", "json", "--bootstrap", "200").stdout)
    _board(page, base_url)
    rows = page.eval_on_selector_all("#leaderboard tbody tr", """rs => Object.fromEntries(rs.map(r => [r.dataset.model,
        [r.cells[16].innerText.trim(), r.cells[15].innerText.trim(), r.querySelector('td.score .ci').innerText.trim()]]))""")
    for m in board["models"]:
        assert rows[m["model"]] == [fmt_dollars(m["dollars_per_solved"]), fmt_count(m["tokens_per_solved"]),
                                    fmt_interval(m["score_ci"])], m["model"]
