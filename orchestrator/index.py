"""`index.json`: the sweep folder's table of contents, rebuilt from the ledger after each trial.

It is what the leaderboard and outside readers consume; it is always written atomically (temp
file + `os.replace`) so a reader never sees half of it.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from kernelarena.errors import UserError
from kernelarena.files import write_json_atomic
from orchestrator.ledger import Ledger, TrialRow
from orchestrator.planner import safe_names
from orchestrator.spec import SweepSpec

INDEX_VERSION = 1
INDEX_FILE = "index.json"


class ModelEntry(BaseModel):
    id: str
    folder: str
    """Filesystem-safe name used under `solutions/<task>/`."""
    harness: str


class Index(BaseModel):
    schema_version: int = INDEX_VERSION
    name: str
    harness: str
    updated_at: float
    counts: dict[str, int]
    models: dict[str, ModelEntry]
    """Keyed by model name (the trial ids' model part)."""
    trials: list[TrialRow]


def rebuild_index(sweep_dir: Path, spec: SweepSpec, ledger: Ledger) -> None:
    """Written from the ledger's rows without building models (see `Ledger.rows_json`), and
    compact, since it is rewritten after every trial; `load_index` validates it on read."""
    folders = safe_names([m.name for m in spec.models])
    data = {
        "schema_version": INDEX_VERSION,
        "name": spec.name,
        "harness": spec.harness,
        "updated_at": time.time(),
        "counts": ledger.counts(),
        "models": {m.name: {"id": m.id, "folder": folders[m.name], "harness": spec.harness_of(m)} for m in spec.models},
        "trials": ledger.rows_json(),
    }
    write_json_atomic(sweep_dir / INDEX_FILE, data, indent=None)


def _sweeps_in(folder: Path, shown: int = 5) -> str:
    """", e.g. runs/a, runs/b": the sweep folders right under `folder`, for an error message."""
    try:
        found = sorted(str(d) for d in folder.iterdir() if (d / INDEX_FILE).is_file())
    except OSError:
        return ""
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return f", e.g. {', '.join(found[:shown])}{more}" if found else ""


def sweep_folder(path: Path) -> Path:
    """The sweep folder a user meant: `path`, or the folder of the index.json `path` names."""
    return path.parent if path.name == INDEX_FILE and path.is_file() else path


def load_index(sweep_dir: Path) -> Index:
    """An error names the sweep folders nearby."""
    sweep_dir = sweep_folder(sweep_dir)
    path = sweep_dir / INDEX_FILE
    if not path.is_file():
        what = f"{sweep_dir} holds no {INDEX_FILE}" if sweep_dir.is_dir() else f"no folder {sweep_dir}"
        nearby = _sweeps_in(sweep_dir) or _sweeps_in(sweep_dir.parent)
        raise UserError(f"{what}; pass a sweep folder written by `kernelarena sweep` (it holds {INDEX_FILE}){nearby}")
    try:
        return Index.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        raise UserError(f"{path} is not a valid sweep index ({first}); "
                        f"re-run `kernelarena sweep --resume {sweep_dir}` to rebuild it") from None
