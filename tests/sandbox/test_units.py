"""The backend-independent parts: config validation, output capping, exit classification,
SIGTERM-to-cancellation. No sandbox is started here."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from pydantic import ValidationError

from sandbox import ExecResult, SandboxConfig
from sandbox.base import as_argv, timed_out_from, with_timeout
from sandbox.cancel import Interrupted, run_cancellable
from sandbox.config import parse_gpus, parse_size
from sandbox.output import BoundedCapture


def result(code: int, *, timed_out: bool = False, oom: bool = False) -> ExecResult:
    return ExecResult("", "", code, timed_out, oom, 1.0, 0, 0)


@pytest.mark.parametrize("text,expected", [("4g", 4 << 30), ("512m", 512 << 20), ("1.5G", 3 << 29),
                                           ("1024", 1024), ("64KiB", 64 << 10), (2048, 2048)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_config_rejects_bad_values_with_a_hint():
    with pytest.raises(ValidationError, match="write it like 4g"):
        SandboxConfig(memory="lots")
    with pytest.raises(ValidationError, match="absolute"):
        SandboxConfig(mounts=[{"host": "/tmp", "target": "relative"}])
    with pytest.raises(ValidationError):
        SandboxConfig(gpus=[-1])
    with pytest.raises(ValidationError):
        SandboxConfig(memmory="4g")  # a typo is an error, not silently ignored
    with pytest.raises(ValidationError):
        SandboxConfig(code_dirs=["../etc"])


def test_config_defaults_match_the_interface():
    cfg = SandboxConfig()
    assert (cfg.backend, cfg.image, cfg.gpus, cfg.memory, cfg.cpus, cfg.pids, cfg.network) == (
        "auto", "kernelarena-sandbox:latest", "none", "4g", 2, 256, False)
    assert cfg.output_limit_bytes == 1_000_000 and not cfg.wants_gpu
    assert SandboxConfig(gpus=[0, 2]).wants_gpu


def test_parse_gpus():
    assert parse_gpus("all") == "all" and parse_gpus("NONE") == "none"
    assert parse_gpus("0, 2") == [0, 2]
    with pytest.raises(ValueError, match="all, none"):
        parse_gpus("first")


def test_capture_under_limit_is_verbatim():
    cap = BoundedCapture(100)
    for _ in range(10):
        cap.feed(b"0123456789")
    assert cap.total == 100 and not cap.truncated and cap.text() == "0123456789" * 10


def test_capture_over_limit_keeps_head_and_tail_and_says_how_much():
    cap = BoundedCapture(1000)
    cap.feed(b"H" * 600)
    for _ in range(100):
        cap.feed(b"m" * 100)
    cap.feed(b"TAIL")
    text = cap.text()
    assert cap.total == 600 + 10_000 + 4 and cap.truncated
    assert text.startswith("H" * 500) and text.endswith("TAIL")
    assert f"{cap.total} bytes in all, {cap.total - 1000} bytes omitted" in text
    assert len(cap.bytes()) == 1000


def test_capture_cut_inside_a_multibyte_character_still_decodes():
    cap = BoundedCapture(1024)
    cap.feed("é".encode() * 2000)
    assert "truncated" in cap.text()  # no UnicodeDecodeError at the cut


def test_exit_classification():
    assert result(0).ended_by == "exit" and result(0).ok
    assert result(124, timed_out=True).ended_by == "timeout"
    assert result(137, oom=True).ended_by == "oom"
    assert result(137).ended_by == "killed" and not result(137).ok
    assert result(143).ended_by == "terminated"
    assert result(139).ended_by == "signal"
    assert timed_out_from(124, 0.5, 1.0, False)
    assert timed_out_from(137, 3.1, 1.0, False)      # SIGKILL after the grace
    assert not timed_out_from(137, 0.2, 1.0, False)  # killed early: not a timeout
    assert not timed_out_from(137, 3.1, 1.0, True)   # the OOM killer, not the clock
    assert result(1).to_dict()["ended_by"] == "exit"


def test_command_forms():
    assert as_argv("echo $HOME") == ["bash", "-c", "echo $HOME"]
    assert as_argv(["ls", "-l"]) == ["ls", "-l"]
    with pytest.raises(ValueError):
        as_argv([])
    assert with_timeout(["true"], 2.5) == ["timeout", "-k", "2", "2.5", "true"]


def test_sigterm_cancels_and_unwinds_finally():
    unwound = []

    async def work():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        finally:
            unwound.append(True)

    with pytest.raises(Interrupted) as info:
        run_cancellable(work())
    assert info.value.exit_code == 143 and unwound == [True]
    # The handler is gone afterwards: the default SIGTERM action is back.
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None)


def test_run_cancellable_returns_the_value():
    async def work():
        return 42

    assert run_cancellable(work()) == 42
