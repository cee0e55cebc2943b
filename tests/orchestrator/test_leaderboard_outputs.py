"""The leaderboard as a user reads and pastes it, through the CLI, on a board of a real sweep's size
(14 models x 41 kernelbench tasks x 3 samples, `tests/web/factory.py`'s `ledger_board`): shared
ranks by confidence, the same in the table, Markdown, JSON and HTML; model names whole at 80 and
120 columns and when piped; the hardware and the scoring method in every format; an HTML page of
bounded height."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import escape
from pathlib import Path

import pytest

from orchestrator.hardware import CPU_NOTE
from orchestrator.leaderboard import SUMMARY_COLUMNS
from orchestrator.leaderboard_table import COMPACT_COLUMNS
from tests.orchestrator.sweep_helpers import REPO, write_spec
from tests.web.factory import ledger_board

RESAMPLES = "300"
LONG_NAMES = (
    "anthropic:claude-opus-4-6", "anthropic:claude-opus-4-5", "openrouter:qwen/qwen3-coder-480b-a35b",
    "openrouter:qwen/qwen3-coder-30b-a3b-instruct", "openai:gpt-5.1-codex-max", "openai:gpt-5.1-codex-mini",
    "google:gemini-3-pro-preview", "google:gemini-2.5-flash-lite-preview-09-2025", "openrouter:deepseek/deepseek-v3.2-exp",
    "openrouter:moonshotai/kimi-k2-thinking", "openrouter:z-ai/glm-4.6", "openrouter:minimax/minimax-m2",
    "anthropic:claude-sonnet-4-5-20250929", "openrouter:meta-llama/llama-4-maverick-17b-128e-instruct",
)


def _cli(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI with its output piped, as in CI logs or `| tee`; COLUMNS set or not at all."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ledger_board(tmp_path_factory.mktemp("boards") / "big")


@pytest.fixture(scope="module")
def long_names(big: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same board under real providers' model names (index.json is what the CLI reads)."""
    out = tmp_path_factory.mktemp("boards") / "long"
    out.mkdir()
    index = json.loads((big / "index.json").read_text())
    rename = dict(zip(sorted(index["models"]), LONG_NAMES, strict=False))  # more names than the board needs
    index["models"] = {rename[m]: e for m, e in index["models"].items()}
    for t in index["trials"]:
        t["model"] = rename[t["model"]]
    (out / "index.json").write_text(json.dumps(index))
    return out


@pytest.fixture(scope="module")
def board_json(big: Path) -> dict:
    return json.loads(_cli("leaderboard", str(big), "--format", "json", "--bootstrap", RESAMPLES).stdout)


def _table_rows(text: str, names: list[str]) -> dict[str, list[str]]:
    """Model -> the cells of its row in a rich table (the line on which its name stands whole)."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        for name in names:
            if name in cells:
                assert name not in rows, f"{name} printed on two rows"
                rows[name] = cells
    return rows


def _table_header(text: str) -> list[str]:
    """The header's column names, joined from the lines its wrapped cells take."""
    lines = [line for line in text.splitlines() if line.startswith("┃")]
    parts = [[c.strip() for c in line.split("┃")[1:-1]] for line in lines]
    return [" ".join(p[i] for p in parts if p[i]) for i in range(len(parts[0]))]


def _md_rows(text: str) -> tuple[list[str], dict[str, list[str]]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == len(header):
            rows[cells[header.index("model")]] = cells
    return header, rows


def test_overlapping_intervals_share_rank_one_and_the_board_is_wholly_ordered(board_json: dict) -> None:
    models = board_json["models"]
    assert len(models) == 14 and board_json["rank_note"].startswith("rank = 1 + the number of models")
    for m in models:  # LMArena's rule, recounted from the intervals the JSON carries
        above = sum(o["score_ci"][0] > m["score_ci"][1] for o in models)
        below = sum(o["score_ci"][1] < m["score_ci"][0] for o in models)
        assert m["rank"] == 1 + above and m["rank_range"] == [1 + above, 14 - below]
    top = [m for m in models if m["rank"] == 1]
    assert len(top) >= 2  # several models share rank 1: their intervals overlap the leader's
    leader = min(models, key=lambda m: m["rank_strict"])
    assert all(m["score_ci"][1] >= leader["score_ci"][0] for m in top)
    wholly_below = [m for m in models if m["rank"] > 1]
    assert wholly_below and all(any(o["score_ci"][0] > m["score_ci"][1] for o in models) for m in wholly_below)
    assert sorted(m["rank_strict"] for m in models) == list(range(1, 15))
    by_score = sorted(models, key=lambda m: -m["score"])
    assert [m["rank_strict"] for m in by_score] == list(range(1, 15))
    assert [m["rank"] for m in models] == sorted(m["rank"] for m in models)  # listed by rank


def test_table_markdown_json_and_html_agree_on_every_rank(big: Path, board_json: dict) -> None:
    args = ("leaderboard", str(big), "--bootstrap", RESAMPLES)
    names = [m["model"] for m in board_json["models"]]
    table = _table_rows(_cli(*args, "--wide", columns=80).stdout, names)
    md_header, md = _md_rows(_cli(*args, "--format", "md").stdout)
    html = _cli(*args, "--format", "html").stdout
    html_rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", html.split('id="summary"')[1].split("</table>")[0]):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        if cells:
            html_rows[cells[SUMMARY_COLUMNS.index("model")]] = cells
    for m in board_json["models"]:
        best, worst = m["rank_range"]
        expected = {"rank": str(m["rank"]), "strict rank": str(m["rank_strict"]),
                    "rank range": f"{best}-{worst}" if best != worst else str(best),
                    "$/solved": (f"${m['dollars_per_solved']:.2f}" if m["dollars_per_solved"] >= 1
                                 else f"${m['dollars_per_solved']:.4f}")}
        for column, text in expected.items():
            at = SUMMARY_COLUMNS.index(column)
            assert table[m["model"]][at] == text
        for at, column in enumerate(SUMMARY_COLUMNS):  # every other column too, cell for cell
            assert table[m["model"]][at] == md[m["model"]][md_header.index(column)] == html_rows[m["model"]][at], column


def test_the_web_api_serves_the_same_ranks_hardware_and_notes(big: Path, board_json: dict) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from orchestrator.web.app import create_app
    from orchestrator.web.catalog import Catalog

    client = TestClient(create_app(Catalog([big.parent], resamples=int(RESAMPLES), seed=0)))
    served = client.get("/api/board/big/kernelbench").json()["board"]
    for key in ("rank_note", "method", "method_note", "hardware"):
        assert served[key] == board_json[key]
    fields = ("model", "rank", "rank_strict", "rank_range", "score_ci")
    assert [[m[f] for f in fields] for m in served["models"]] == [[m[f] for f in fields] for m in board_json["models"]]


def test_model_names_whole_at_80_and_120_columns_and_when_piped(long_names: Path) -> None:
    shown = {}
    for columns in (80, 120, None):  # None: piped with no COLUMNS at all
        out = _cli("leaderboard", str(long_names), "--bootstrap", RESAMPLES, columns=columns).stdout
        width = columns or 80
        assert max(len(line) for line in out.splitlines()) <= width, out
        rows = _table_rows(out, list(LONG_NAMES))
        assert set(rows) == set(LONG_NAMES), out  # every name whole, on a row of its own
        assert rows["anthropic:claude-opus-4-6"] != rows["anthropic:claude-opus-4-5"]
        header = _table_header(out)
        assert header[:2] == ["rank", "model"] and "score" in header and set(header) <= set(COMPACT_COLUMNS)
        left_out = [c for c in SUMMARY_COLUMNS if c not in header]
        assert f"Not shown here: {', '.join(left_out)}" in " ".join(out.split())
        shown[columns] = header
    assert len(shown[120]) > len(shown[80]) and shown[None] == shown[80]
    assert "score 95% CI" in shown[120]


def test_below_the_fewest_columns_a_name_wraps_at_its_punctuation_whole(long_names: Path) -> None:
    out = _cli("leaderboard", str(long_names), "--bootstrap", RESAMPLES, columns=50).stdout
    assert max(len(line) for line in out.splitlines()) <= 50
    names, pieces = [], []
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 3:
            if cells[0] and pieces:  # a row's first line: the previous name is complete
                names.append("".join(pieces))
                pieces = []
            pieces.append(cells[1])
            assert cells[0] or pieces[-2][-1] in ":/-_.", line  # broken after punctuation only
    names.append("".join(pieces))
    assert sorted(names) == sorted(LONG_NAMES)


def test_wide_shows_every_column_and_the_name_still_whole(long_names: Path) -> None:
    out = _cli("leaderboard", str(long_names), "--bootstrap", RESAMPLES, "--wide", columns=80).stdout
    assert _table_header(out) == list(SUMMARY_COLUMNS)
    assert set(_table_rows(out, list(LONG_NAMES))) == set(LONG_NAMES)
    assert "Not shown here" not in out


def test_hardware_and_method_in_table_markdown_and_json(big: Path, board_json: dict) -> None:
    assert board_json["hardware"] == {"device": "cpu", "cpu_caveat": CPU_NOTE}
    assert board_json["method"] == "published" and "score = mean x median x pass@1" in board_json["method_note"]
    table = " ".join(_cli("leaderboard", str(big), "--bootstrap", "0", columns=80).stdout.split())
    md = _cli("leaderboard", str(big), "--bootstrap", "0", "--format", "md").stdout
    for text in (table, md):
        assert f"Hardware: CPU. {CPU_NOTE}" in text
        assert "KernelArena's published method" in text and "rank = the order by score, exact ties shared" in text
    strict = json.loads(_cli("leaderboard", str(big), "--bootstrap", "0", "--format", "json", "--method", "strict").stdout)
    assert strict["method"] == "strict" and "STRICT method" in strict["method_note"]
    assert "STRICT method" in " ".join(_cli("leaderboard", str(big), "--bootstrap", "0", "--method", "strict").stdout.split())


def test_html_export_is_a_page_a_reader_can_scan(big: Path, board_json: dict) -> None:
    html = _cli("leaderboard", str(big), "--bootstrap", RESAMPLES, "--format", "html").stdout
    sections = [h for h in re.findall(r"<h2[^>]*>(.*?)</h2>", html)]
    assert sections == ["Models", "Kernels", "Per kernel"]  # the summary board first
    summary = html.split('id="summary"')[1].split("</table>")[0]
    assert summary.count("<tr>") == 1 + 14
    assert summary.count('<td class="name">') == 14 * 2  # model and harness, kept on one line
    assert summary.count('<td class="ci">') == 14 * 2  # both intervals, kept on one line
    assert re.search(r"\.name,\.ci,\.num\{white-space:nowrap\}", html)
    matrix = html.split('id="kernels"')[1].split("</table>")[0]
    assert matrix.count("<tr>") == 1 + 41 and "level1_1_square_matmul" in matrix
    tasks = re.findall(r'<td class="name"><a href="#k-kernelbench-([^"]+)">', matrix)
    assert tasks.index("level1_2_tall_skinny_matmul") < tasks.index("level1_10_qk_softmax")  # natural order
    assert html.count("<details") == 41 and "<details open" not in html  # per-kernel trials start collapsed
    assert "Hardware: <b>CPU</b>" in html and CPU_NOTE in html and escape(board_json["rank_note"]) in html
    top = board_json["models"][0]
    assert f"${top['dollars_per_solved']:.2f}" in summary or f"${top['dollars_per_solved']:.4f}" in summary


def test_compare_and_the_kernel_lists_sort_tasks_as_people_read_them(big: Path) -> None:
    from orchestrator.index import load_index
    from orchestrator.leaderboard import build_leaderboard, compare_models

    index = load_index(big)
    tasks = [t["task"] for t in compare_models(index, "model-00", "model-01", resamples=0).tasks]
    assert (tasks.index("level1_2_tall_skinny_matmul") < tasks.index("level1_10_qk_softmax")
            < tasks.index("level2_1_gemm_bias_relu"))
    assert [k.task for k in build_leaderboard(index, resamples=0).kernels] == tasks


@pytest.mark.browser
@pytest.mark.slow
def test_html_export_at_1440_wide_is_a_few_screens_tall(big: Path, tmp_path: Path) -> None:
    from tests.web.browser import chromium, missing_prerequisite

    if missing_prerequisite():
        pytest.skip(str(missing_prerequisite()))
    out = tmp_path / "board.html"
    _cli("leaderboard", str(big), "--bootstrap", RESAMPLES, "--format", "html", "--out", str(out))
    with chromium() as ctx:
        page = ctx.new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(out.as_uri())
        width, height = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        assert width <= 1440 and height <= 5000, (width, height)  # was 2,373 x 98,998
        # every model name and interval on one line: its box is one line tall
        tall = page.eval_on_selector_all(
            "#summary td.name, #summary td.ci",
            "tds => tds.filter(td => { const r = document.createRange(); r.selectNodeContents(td);"
            " return r.getClientRects().length > 1 }).map(td => td.innerText)")
        assert tall == []
        page.click("#kernels a[href='#k-kernelbench-level1_5_gelu']")  # a matrix link opens its section
        assert page.evaluate("document.getElementById('k-kernelbench-level1_5_gelu').open")
        assert page.locator("#t-k-kernelbench-level1_5_gelu tbody tr").count() == 14 * 3


@pytest.mark.slow
def test_the_table_sweep_prints_at_its_end_names_the_hardware(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "spec.toml", name="ends", backend="process", out=tmp_path / "sweep", tasks=["swish"],
                      models=[{"id": "scripted:reference", "name": "openrouter:qwen/qwen3-coder-480b-a35b"},
                              {"id": "scripted:reference", "name": "openrouter:qwen/qwen3-coder-30b-a3b-instruct"}])
    out = _cli("sweep", str(spec), columns=80).stdout
    rows = _table_rows(out, ["openrouter:qwen/qwen3-coder-480b-a35b", "openrouter:qwen/qwen3-coder-30b-a3b-instruct"])
    assert len(rows) == 2
    text = " ".join(out.split())
    assert "Hardware: CPU." in text and "KernelArena's published method" in text and "rank = 1 + the number" in text
