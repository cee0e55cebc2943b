"""The leaderboard as a terminal table (`kernelarena leaderboard`, and the table `sweep` prints).

The model column is never cut: a model name is what tells two rows apart. To fit the width, the
table leaves out whole columns, lowest priority first (`PRIORITY`), and says which; only when the
highest-priority columns alone do not fit does a model name wrap, after its punctuation, whole.
By default it shows the compact set (`COMPACT_COLUMNS`); `wide=True` shows every column at its
natural width, however wide. The notes under the table (hardware, how the score is computed, how
the rank is set) wrap at the console's width.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from orchestrator.leaderboard import SUMMARY_COLUMNS, Leaderboard, board_notes, summary_cells

PRIORITY = ("model", "rank", "score", "score 95% CI", "pass@1", "rank range", "solved", "P(rank holds)",
            "median x", "mean x", "strict rank", "hacks", "finished",
            "geomean x", "geomean 95% CI", "fast_1.0", "fast_1.5", "flagged", "harness", "tokens/solved", "$/solved")
"""Highest first: the columns a narrow table keeps longest."""
COMPACT_COLUMNS = PRIORITY[:PRIORITY.index("finished") + 1]
KEPT_ALWAYS = ("model", "rank", "score")
"""Never left out; below their width the model name wraps instead."""

assert set(PRIORITY) == set(SUMMARY_COLUMNS), "every summary column needs a priority"


def _column_width(header: str, cells: list[str]) -> int:
    """Wide enough for every cell on one line; the header may wrap between its words."""
    return max([cell_len(word) for word in header.split()] + [cell_len(c) for c in cells])


def _table_width(widths: list[int]) -> int:
    """Rich's default box: one space of padding each side of a cell, a rule between and around columns."""
    return sum(widths) + 3 * len(widths) + 1


def fit_columns(header_cells: dict[str, list[str]], width: int | None, wide: bool) -> list[str]:
    """Which columns to show, in board order: everything when `wide`, else the compact set less the
    lowest-priority columns until the table fits `width`."""
    if wide:
        return list(SUMMARY_COLUMNS)
    shown = [c for c in SUMMARY_COLUMNS if c in COMPACT_COLUMNS]
    droppable = [c for c in reversed(PRIORITY) if c in shown and c not in KEPT_ALWAYS]
    while width is not None and droppable:
        if _table_width([_column_width(c, header_cells[c]) for c in shown]) <= width:
            break
        shown.remove(droppable.pop(0))
    return shown


def wrap_name(name: str, width: int) -> str:
    """`name` on lines of at most `width` cells, broken after a ':', '/', '-', '_' or '.' where one
    fits (mid-part only where none does); every character kept."""
    lines, rest = [], name
    while cell_len(rest) > width:
        cut = max((i + 1 for i, ch in enumerate(rest[:width]) if ch in ":/-_."), default=width)
        lines.append(rest[:cut])
        rest = rest[cut:]
    return "\n".join([*lines, rest])


def render_table(board: Leaderboard, width: int | None = None, wide: bool = False) -> RenderableType:
    """The summary table and its notes; `width` is the console's (None: no limit)."""
    rows = [summary_cells(s) for s in board.models]
    by_column = {c: [r[i] for r in rows] for i, c in enumerate(SUMMARY_COLUMNS)}
    shown = fit_columns(by_column, width, wide)
    others = [_column_width(c, by_column[c]) for c in shown if c != "model"]
    if width is not None and not wide:  # the names wrap only where the fewest columns leave too little room
        room = max(12, width - _table_width([*others, 0]))
        by_column["model"] = [wrap_name(n, room) for n in by_column["model"]]
    table = Table(title=f"Leaderboard: {board.name}")
    for col in shown:
        if col == "model":
            table.add_column(col, overflow="fold")
        else:
            table.add_column(col, justify="left" if col == "harness" else "right",
                             width=_column_width(col, by_column[col]))
    for i in range(len(rows)):
        table.add_row(*(Text(by_column[c][i]) for c in shown))
    notes = list(board_notes(board))
    left_out = [c for c in SUMMARY_COLUMNS if c not in shown]
    if left_out:
        notes.append(f"Not shown here: {', '.join(left_out)} (--wide shows every column; "
                     "--format md, json and html always carry them all).")
    return Group(table, *(Text(n) for n in notes))


def natural_width(board: Leaderboard) -> int:
    """The width the table needs with every column unwrapped (`wide` prints at this width)."""
    rows = [summary_cells(s) for s in board.models]
    return _table_width([_column_width(c, [r[i] for r in rows]) for i, c in enumerate(SUMMARY_COLUMNS)])
