"""Versioned prompt templates: version and sha256 recorded, rendering complete."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from harnesses.minimal import MinimalHarness
from harnesses.prompts import PROMPTS_DIR, load_prompt
from harnesses.trial import render_prompt
from kernelarena.errors import ConfigError
from scorer.tasks.suites import load_suite


def test_template_record_names_file_version_and_hash() -> None:
    template = load_prompt("minimal_v1")
    raw = (PROMPTS_DIR / "minimal_v1.md").read_bytes()
    assert template.record() == {
        "name": "minimal_v1",
        "file": "minimal_v1.md",
        "version": "minimal-v1.0",
        "sha256": hashlib.sha256(raw).hexdigest(),
    }
    assert "version:" not in template.body  # front matter is not sent to the model


def test_rendered_prompt_carries_reference_device_and_rules() -> None:
    suite = load_suite("demo")
    task = suite.task("swish")
    prompt = render_prompt(load_prompt("minimal_v1"), MinimalHarness(bash_timeout_s=42), suite, task, "cpu", "/ws")
    assert task.source().strip() in prompt
    assert "TRITON_INTERPRET=1" in prompt and "CPU" in prompt
    assert "class ModelNew" in prompt and "torch.matmul" in prompt
    assert "timeout 42 s" in prompt
    assert "{{" not in prompt


def test_missing_value_and_unknown_template_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs values for"):
        load_prompt("minimal_v1").render(device="cpu")
    with pytest.raises(ConfigError, match="no prompt template 'nope'"):
        load_prompt("nope")
    (tmp_path / "bare.md").write_text("no front matter {{x}}")
    with pytest.raises(ConfigError, match="version"):
        load_prompt("bare", directory=tmp_path)
