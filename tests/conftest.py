"""The dearest test files first: xdist hands out whole files (--dist loadfile), and a file of three
two-minute sweeps that comes last keeps one worker busy while the others idle. tests/durations.json
holds what each file took (scripts/test_durations.py writes it); files it does not list keep their
place after the listed ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

_DURATIONS = Path(__file__).with_name("durations.json")


def _seconds() -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(_DURATIONS.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seconds = _seconds()
    if not seconds:
        return
    root = Path(str(config.rootpath))

    def cost(item: pytest.Item) -> float:
        try:
            return -seconds.get(Path(str(item.path)).relative_to(root).as_posix(), 0.0)
        except ValueError:
            return 0.0

    items.sort(key=cost)  # stable: a file's own tests keep their order
