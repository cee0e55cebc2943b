"""The leaderboard as ONE self-contained HTML file: inline CSS, a few lines of inline JS to sort
the summary by clicking a header, no external assets.

Laid out for reading top to bottom: the notes (hardware, the score's method, how ranks are set),
the summary board, a compact kernel x model matrix (one short mark per sample, the full text on
hover, a legend), then one collapsed section per kernel (opened by its matrix link) with each
trial's verdict, evidence and files. Names and intervals never break at their hyphens; the wide
tables scroll sideways inside the page. The figures are the other formats' (`summary_cells`),
formatted as the web app formats them."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from html import escape
from pathlib import Path

from orchestrator.leaderboard import (
    CONTENDED_MARK,
    CONTENDED_NOTE,
    SUMMARY_COLUMNS,
    KernelEntry,
    Leaderboard,
    TrialCell,
    any_contended,
    cell_text,
    column_help,
    fmt_speedup,
    marked_contended,
    method_note,
    relative_link,
    summary_cells,
)

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222;font-size:14px;line-height:1.35}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.4em 0 .4em}
p{margin:.35em 0;max-width:75em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4em 0}
th,td{border:1px solid #ccc;padding:.2em .45em;text-align:right;vertical-align:top}
th{background:#f3f3f3}
table.sortable th{cursor:pointer;user-select:none}
td:first-child,th:first-child{text-align:left}
.name,.ci,.num{white-space:nowrap}
td.name,.left{text-align:left}
.passed{background:#e6f7e6}.hack_detected{background:#fde2e2}
.incorrect,.compile_error,.runtime_error,.timeout,.no_kernel,.failed{background:#fff4e0}
.pending,.running{background:#eef2f7}
code{font-size:.9em}
.note{background:#fff8d6;border:1px solid #e8d48a;padding:.4em .7em}
.err{max-width:40em;max-height:6em;overflow:auto;text-align:left;white-space:pre-wrap;font-family:monospace;font-size:.85em}
th.name,th.left{text-align:left}
table.matrix th.model{vertical-align:bottom;text-align:left;font-weight:normal;padding:.3em .15em}
.vname{writing-mode:vertical-rl;transform:rotate(180deg);white-space:normal}
.vname span{white-space:nowrap}
table.matrix td{white-space:nowrap;font-family:ui-monospace,monospace;font-size:.85em;padding:.1em .3em}
table.matrix td:first-child,table.matrix th:first-child{position:sticky;left:0;background:#fff;font-family:inherit;font-size:1em}
table.matrix th:first-child{background:#f3f3f3}
.m{padding:0 .15em;border-radius:2px}
.legend .m{margin-right:.2em}
details{margin:.1em 0}details>summary{cursor:pointer;padding:.15em 0}
details[open]{margin:.4em 0 1em}
nav a{margin-right:1em}
"""

# Sorts numerically when both cells parse as numbers (leading number of "3/4", "x1.23" or an
# interval's "[0.41, 1.20]" too).
_JS = r"""
function key(t){var m=t.replace(/^[x\[$]/,'').replace(/,/g,'').match(/^-?[0-9.]+/);return m?parseFloat(m[0]):t.toLowerCase()}
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){
var tb=th.closest('table').tBodies[0],rows=Array.from(tb.rows),asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
rows.sort(function(a,b){var x=key(a.cells[i].innerText),y=key(b.cells[i].innerText);
if(typeof x!==typeof y){x=String(x);y=String(y)}return (x<y?-1:x>y?1:0)*(asc?1:-1)});
rows.forEach(function(r){tb.appendChild(r)})})});
function openTarget(){var e=location.hash&&document.getElementById(location.hash.slice(1));
if(e&&e.tagName==='DETAILS'){e.open=true;e.scrollIntoView()}}
window.addEventListener('hashchange',openTarget);openTarget();
"""

# A sample's mark in the kernel matrix: a passed kernel shows its speedup; the rest a short code.
_MARKS = {"incorrect": "inc", "compile_error": "ce", "runtime_error": "re", "timeout": "to",
          "hack_detected": "hack", "no_kernel": "none", "failed": "fail", "pending": "…", "running": "run"}
_MARK_HELP = {"inc": "incorrect output", "ce": "compile error", "re": "runtime error", "to": "timeout",
              "hack": "rejected by an anti-hack check", "none": "no kernel submitted", "fail": "trial failed (no verdict)",
              "…": "pending", "run": "running"}
_NAME_COLUMNS = ("model", "harness")
_CI_COLUMNS = ("geomean 95% CI", "score 95% CI")


def _anchor(suite: str, task: str) -> str:
    return "k-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in f"{suite}-{task}")


def _table(table_id: str, header: list[str], rows: list[list[str]], titles: dict[str, str] | None = None,
           classes: dict[str, str] | None = None, table_class: str = "") -> str:
    """Cells in `rows` are already-escaped HTML; `titles` explains headers (as tooltips); `classes`
    gives a column's cells a class (`name` and `ci` keep them on one line)."""
    titles, classes = titles or {}, classes or {}
    cls = [f' class="{classes[h]}"' if h in classes else "" for h in header]
    head = "".join(f'<th{c} title="{escape(titles[h])}">{escape(h)}</th>' if h in titles else f"<th{c}>{escape(h)}</th>"
                   for c, h in zip(cls, header, strict=True))
    body = "".join("<tr>" + "".join(f"<td{c}>{v}</td>" for c, v in zip(cls, row, strict=True)) + "</tr>" for row in rows)
    return (f'<table class="{table_class}" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def _verdict_class(cell: TrialCell) -> str:
    if cell.state == "failed":
        return "failed"
    return cell.verdict or cell.state


def _summary(board: Leaderboard) -> str:
    sharing = Counter(s.rank for s in board.models)
    at = SUMMARY_COLUMNS.index("rank")
    rows = []
    for s in board.models:
        cells = [escape(c) for c in summary_cells(s)]
        if sharing[s.rank] > 1:
            cells[at] = f'<span title="{sharing[s.rank]} models share rank {s.rank}">{cells[at]}</span>'
        rows.append(cells)
    classes = {c: "name" for c in _NAME_COLUMNS} | {c: "ci" for c in _CI_COLUMNS}
    return _table("summary", list(SUMMARY_COLUMNS), rows, {c: column_help(c, board.method) for c in SUMMARY_COLUMNS},
                  classes, "sortable")


def _mark(cell: TrialCell) -> str:
    """One sample in the matrix: its speedup when passed, else a short code; the full text on hover."""
    if cell.state == "done" and cell.verdict == "passed":
        text = fmt_speedup(cell.speedup) + ("*" if marked_contended(cell) else "")
    else:
        text = _MARKS.get(_verdict_class(cell), "?")
    return f'<span class="m {_verdict_class(cell)}" title="{escape(cell_text(cell))}">{escape(text)}</span>'


def _legend() -> str:
    marks = "".join(f'<span class="m {v}">{escape(m)}</span> {escape(_MARK_HELP[m])}; ' for v, m in _MARKS.items())
    return (f'<p class="legend">One mark per sample: <span class="m passed">1.23</span> passed, its speedup '
            f"(* timed under contention); {marks}hover a mark for the whole verdict, hacks and flags.</p>")


def _name_html(name: str) -> str:
    """A model name that may break only after its ':' and '/' (never at a hyphen)."""
    parts = re.split(r"(?<=[:/])", name)
    return "<wbr>".join(f"<span>{escape(p)}</span>" for p in parts if p)


def _matrix(board: Leaderboard, by_kernel: list[dict[str, list[TrialCell]]]) -> str:
    suites = {k.suite for k in board.kernels}
    one_suite = len(suites) == 1
    # Rotated names wrap after ':' or '/' within the longest unbreakable part (at least 22 characters).
    height = max([22] + [len(p) for s in board.models for p in re.split(r"(?<=[:/])", s.model)]) + 2
    head = (f"<th>kernel{f' ({escape(next(iter(suites)))})' if one_suite else ''}</th>"
            + "".join(f'<th class="model" title="{escape(s.model)}"><div class="vname" style="max-height:{height}ch">'
                      f"{_name_html(s.model)}</div></th>" for s in board.models))
    body = []
    for kernel, by_model in zip(board.kernels, by_kernel, strict=True):
        label = escape(kernel.task) if one_suite else f"{escape(kernel.suite)}/{escape(kernel.task)}"
        row = f'<td class="name"><a href="#{_anchor(kernel.suite, kernel.task)}">{label}</a></td>'
        row += "".join("<td>" + (" ".join(_mark(c) for c in by_model.get(s.model, [])) or "-") + "</td>" for s in board.models)
        body.append(f"<tr>{row}</tr>")
    return (f'<div class="scroll"><table class="matrix" id="kernels"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _kernel_section(board: Leaderboard, kernel: KernelEntry, by_model: dict[str, list[TrialCell]],
                    sweep_dir: Path, out_file: Path | None) -> str:
    """A collapsed section: the kernel's trials in board order, with evidence and files."""
    anchor = _anchor(kernel.suite, kernel.task)
    rows = []
    for s in board.models:
        for cell in by_model.get(s.model, []):
            link = relative_link(cell.rel_dir, out_file, sweep_dir)
            files = " ".join(f'<a href="{escape(link)}/{name}">{name}</a>'
                             for name in ("kernel.py", "transcript.jsonl", "score.json"))
            rows.append([
                escape(cell.model), str(cell.sample),
                f'<span class="{_verdict_class(cell)}">{escape(cell.verdict or cell.state)}</span>',
                escape(fmt_speedup(cell.speedup) + (CONTENDED_MARK if marked_contended(cell) else "")),
                escape(", ".join(dict.fromkeys(cell.hacks)) or "-"), escape(", ".join(dict.fromkeys(cell.flags)) or "-"),
                f'<div class="err">{escape(cell.error or "")}</div>', files,
            ])
    passed = [c for c in kernel.cells if c.state == "done" and c.verdict == "passed"]
    best = max(passed, key=lambda c: c.speedup or 0.0, default=None)
    headline = f"{len(passed)} of {len(kernel.cells)} samples passed" + (
        f"; fastest x{fmt_speedup(best.speedup)} by {best.model}" if best and best.speedup else "")
    table = _table(f"t-{anchor}", ["model", "sample", "verdict", "speedup", "hacks", "flags", "error", "files"], rows,
                   classes={"model": "name", "speedup": "num"}
                   | {c: "left" for c in ("verdict", "hacks", "flags", "error", "files")})
    return (f'<details id="{anchor}"><summary><b class="name">{escape(kernel.suite)}/{escape(kernel.task)}</b> '
            f'<span class="name">{escape(headline)}</span></summary><div class="scroll">{table}</div></details>')


def _notes(board: Leaderboard) -> str:
    """Hardware, method, rank rule and intervals: the same notes the text formats print."""
    out = ""
    hardware = board.hardware
    if hardware is not None:
        out += f"<p>Hardware: <b>{escape('CPU' if hardware.device == 'cpu' else hardware.device)}</b></p>"
        if hardware.cpu_caveat:
            out += f'<p class="note">{escape(hardware.cpu_caveat)}</p>'
    if any_contended(board):
        out += f'<p class="note">{escape(CONTENDED_NOTE)}</p>'
    out += f"<p>{escape(board.method_note or method_note(board.method))}</p>"
    out += f'<p id="rank-note">{escape(board.rank_note)} Hover a column header for its meaning; click it to sort.</p>'
    if board.bootstrap:
        out += (f"<p>95% CI: percentile interval over {board.bootstrap.resamples} bootstrap resamples (seed "
                f"{board.bootstrap.seed}) of the tasks, and of the samples within a task, drawn alike for every "
                "model. P(rank holds): share of resamples in which a model ranks above the one below it "
                "(ties count one half).</p>")
    return out


def render_html(board: Leaderboard, sweep_dir: Path, out_file: Path | None) -> str:
    by_kernel = []
    for kernel in board.kernels:
        by_model: dict[str, list[TrialCell]] = defaultdict(list)
        for cell in kernel.cells:
            by_model[cell.model].append(cell)
        by_kernel.append(by_model)
    sections = "".join(_kernel_section(board, k, b, sweep_dir, out_file) for k, b in zip(board.kernels, by_kernel, strict=True))
    title = f"KernelArena leaderboard: {board.name}"
    return (
        f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{escape(title)}</title>"
        f"<style>{_CSS}</style></head><body id=\"top\"><h1>{escape(title)}</h1>{_notes(board)}"
        '<nav><a href="#models">Models</a><a href="#kernels-section">Kernels</a><a href="#details">Per kernel</a></nav>'
        f'<h2 id="models">Models</h2><div class="scroll">{_summary(board)}</div>'
        f'<h2 id="kernels-section">Kernels</h2>{_legend()}{_matrix(board, by_kernel)}'
        f'<h2 id="details">Per kernel</h2><p>Each kernel\'s trials, in board order; click to open.</p>{sections}'
        f"<script>{_JS}</script></body></html>\n"
    )
