"""The leaderboard as ONE self-contained HTML file: inline CSS, a few lines of inline JS to sort
tables by clicking a header, no external assets. A summary table, a per-kernel overview, and
one anchored section per kernel linking to each trial's files."""

from __future__ import annotations

from collections import defaultdict
from html import escape
from pathlib import Path

from orchestrator.leaderboard import (
    CONTENDED_MARK, CONTENDED_NOTE, SUMMARY_COLUMNS, Leaderboard, TrialCell, any_contended, cell_text, column_help, fmt_speedup, marked_contended, method_note, relative_link, summary_cells,
)

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f3f3f3;cursor:pointer;user-select:none}
td:first-child,th:first-child{text-align:left}
.passed{background:#e6f7e6}.hack_detected{background:#fde2e2}
.incorrect,.compile_error,.runtime_error,.timeout,.no_kernel,.failed{background:#fff4e0}
code{font-size:.9em}
.note{background:#fff8d6;border:1px solid #e8d48a;padding:.5em .8em;max-width:60em}
.err{max-width:40em;text-align:left;white-space:pre-wrap;font-family:monospace;font-size:.85em}
"""

# Sorts numerically when both cells parse as numbers (leading number of "3/4", "x1.23" or an
# interval's "[0.41, 1.20]" too).
_JS = r"""
function key(t){var m=t.replace(/^[x\[]/,'').match(/^-?[0-9.]+/);return m?parseFloat(m[0]):t.toLowerCase()}
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){
var tb=th.closest('table').tBodies[0],rows=Array.from(tb.rows),asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
rows.sort(function(a,b){var x=key(a.cells[i].innerText),y=key(b.cells[i].innerText);
if(typeof x!==typeof y){x=String(x);y=String(y)}return (x<y?-1:x>y?1:0)*(asc?1:-1)});
rows.forEach(function(r){tb.appendChild(r)})})});
"""


def _anchor(suite: str, task: str) -> str:
    return "k-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in f"{suite}-{task}")


def _table(table_id: str, header: list[str], rows: list[list[str]], titles: dict[str, str] | None = None) -> str:
    """Cells in `rows` are already-escaped HTML; `titles` explains headers (as tooltips)."""
    titles = titles or {}
    head = "".join(f'<th title="{escape(titles[h])}">{escape(h)}</th>' if h in titles else f"<th>{escape(h)}</th>"
                   for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _verdict_class(cell: TrialCell) -> str:
    if cell.state == "failed":
        return "failed"
    return cell.verdict or cell.state


def render_html(board: Leaderboard, sweep_dir: Path, out_file: Path | None) -> str:
    models = [s.model for s in board.models]
    summary = _table("summary", list(SUMMARY_COLUMNS), [[escape(c) for c in summary_cells(s)] for s in board.models],
                     {c: column_help(c, board.method) for c in SUMMARY_COLUMNS})

    overview_rows = []
    sections = []
    for kernel in board.kernels:
        anchor = _anchor(kernel.suite, kernel.task)
        by_model: dict[str, list[TrialCell]] = defaultdict(list)
        for cell in kernel.cells:
            by_model[cell.model].append(cell)
        row = [f'<a href="#{anchor}">{escape(kernel.suite)}/{escape(kernel.task)}</a>']
        for model in models:
            cells = by_model.get(model, [])
            row.append("<br>".join(f'<span class="{_verdict_class(c)}">{escape(cell_text(c))}</span>' for c in cells) or "-")
        overview_rows.append(row)

        detail_rows = []
        for cell in kernel.cells:
            link = relative_link(cell.rel_dir, out_file, sweep_dir)
            files = " ".join(
                f'<a href="{escape(link)}/{name}">{name}</a>' for name in ("kernel.py", "transcript.jsonl", "score.json")
            )
            detail_rows.append([
                escape(cell.model), str(cell.sample), f'<span class="{_verdict_class(cell)}">{escape(cell.verdict or cell.state)}</span>',
                escape(fmt_speedup(cell.speedup) + (CONTENDED_MARK if marked_contended(cell) else "")),
                escape(", ".join(dict.fromkeys(cell.hacks)) or "-"), escape(", ".join(dict.fromkeys(cell.flags)) or "-"),
                f'<div class="err">{escape(cell.error or "")}</div>', files,
            ])
        sections.append(
            f'<section id="{anchor}"><h3>{escape(kernel.suite)}/{escape(kernel.task)}</h3>'
            + _table(f"t-{anchor}", ["model", "sample", "verdict", "speedup", "hacks", "flags", "error", "files"], detail_rows)
            + '<a href="#top">back to top</a></section>'
        )

    overview = _table("kernels", ["kernel", *models], overview_rows)
    title = f"KernelArena leaderboard: {board.name}"
    hardware = board.hardware
    device = ""
    if hardware is not None:
        device = f"<p>Hardware: <b>{escape('CPU' if hardware.device == 'cpu' else hardware.device)}</b></p>"
        if hardware.cpu_caveat:
            device += f'<p class="note">{escape(hardware.cpu_caveat)}</p>'
    if any_contended(board):
        device += f'<p class="note">{escape(CONTENDED_NOTE)}</p>'
    intervals = (
        f"<p>95% CI: percentile interval over {board.bootstrap.resamples} bootstrap resamples (seed "
        f"{board.bootstrap.seed}) of the tasks, and of the samples within a task, drawn alike for every "
        "model. P(rank holds): share of resamples in which a model ranks above the one below it "
        "(ties count one half).</p>"
        if board.bootstrap else ""
    )
    return (
        f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
        f"<style>{_CSS}</style></head><body id=\"top\"><h1>{escape(title)}</h1>{device}"
        f"<p>{escape(method_note(board.method))} Hover a column header for its meaning; click it to sort.</p>"
        f"{intervals}"
        f"<h2>Models</h2>{summary}<h2>Kernels</h2>{overview}<h2>Per kernel</h2>{''.join(sections)}"
        f"<script>{_JS}</script></body></html>\n"
    )
