"""`kernelarena run`: a trial from the command line, and one-line user errors with exit code 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.cli import main
from tests.harness.helpers import craft_transcript


def kernelarena(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["kernelarena", *args])
    with pytest.raises(SystemExit) as exit:
        main()
    captured = capsys.readouterr()
    return int(exit.value.code or 0), captured.out, captured.err


def test_run_prints_a_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    script = craft_transcript(tmp_path / "script.jsonl", [("", [("bash", {"command": "echo hello"})]), ("All done.", [])])
    out = tmp_path / "trial"
    code, stdout, stderr = kernelarena(
        monkeypatch, capsys, "run", "--suite", "demo", "--task", "swish", "--model", f"replay:{script}",
        "--sandbox", "process", "--device", "cpu", "--out", str(out), "--max-turns", "5",
        "--harness-option", "bash_timeout_s=30",
    )
    assert code == 0, stderr
    assert "verdict      no_kernel" in stdout
    assert "exit reason  done" in stdout
    assert "turns        2" in stdout and "tokens       20 in / 20 out" in stdout
    assert f"transcript   {out / 'transcript.jsonl'}" in stdout
    assert (out / "score.json").is_file()


@pytest.mark.parametrize("args,needle", [
    (["--model", "openai:gpt-5"], "OPENAI_API_KEY"),
    (["--sandbox", "vm"], "--sandbox 'vm'"),
    (["--max-turns", "0"], "max_turns"),
    (["--model-option", "oops"], "key=value"),
    (["--task", "nope"], "no task 'nope'"),
    (["--harness", "nope"], "unknown harness 'nope'"),
    (["--harness-option", "colour=red"], "bad option for harness 'minimal'"),
])
def test_bad_input_is_one_line_and_exit_2_before_anything_starts(
    args: list[str], needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chosen = {"--suite": "demo", "--task": "swish", "--model": "scripted:reference", "--out": str(tmp_path / "out")}
    chosen.update(dict(zip(args[::2], args[1::2], strict=True)))
    code, _, stderr = kernelarena(monkeypatch, capsys, "run", *[part for pair in chosen.items() for part in pair])
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], stderr
    assert not (tmp_path / "out" / "transcript.jsonl").exists()
