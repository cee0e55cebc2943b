"""The shared helpers in kernelarena/: atomic writes, pydantic errors as user errors, truncation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from kernelarena.errors import first_problem
from kernelarena.files import replacing, write_atomic, write_json_atomic
from kernelarena.text import truncate


def test_atomic_write_replaces_whole_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    path.write_text("old")
    write_json_atomic(path, {"a": [1, 2]})
    assert json.loads(path.read_text()) == {"a": [1, 2]}
    write_atomic(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"
    write_atomic(path, "text")
    assert path.read_text() == "text"
    assert [p.name for p in tmp_path.iterdir()] == ["index.json"]


def test_a_failed_atomic_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with replacing(path) as fh:
            fh.write("half of the new")
            raise RuntimeError("writer died")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["kernel.py"]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    depth: int = 1

    @field_validator("depth")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("depth must be at least 1")
        return v


def _problem(**data: object) -> tuple[str, str]:
    with pytest.raises(ValidationError) as info:
        _Config(**data)
    return first_problem(info.value, whole="options")


def test_first_problem_names_the_field_and_the_fix() -> None:
    assert _problem(name="x", colour="red") == ("colour", "unknown field; check the spelling")
    assert _problem() == ("name", "required field is missing; add it")
    assert _problem(name="x", depth=0) == ("depth", "depth must be at least 1")  # no "Value error, "
    assert _problem(name="x", depth="deep")[0] == "depth"


def test_first_problem_of_the_whole_object() -> None:
    with pytest.raises(ValidationError) as info:
        _Config.model_validate("not a mapping")
    assert first_problem(info.value, whole="options")[0] == "options"


def test_truncate_keeps_both_ends_and_says_how_much_went() -> None:
    text = "start-" + "x" * 1000 + "-end"
    cut = truncate(text, 100, note="; --full shows all")
    assert cut.startswith("start-") and cut.endswith("-end")
    assert f"[... {len(text) - 100} characters truncated; --full shows all ...]" in cut
    assert truncate("short", 100) == "short"
    assert truncate(text, 0) == text
