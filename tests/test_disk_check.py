"""scripts/disk_check.sh: `make test` and `make demo` stop at once, in one line naming the fix, where
the disk cannot hold the venv (a full disk otherwise stops them minutes in, deep inside pip)."""

from __future__ import annotations

import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "disk_check.sh"


def _run(*gib: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *gib], capture_output=True, text=True, timeout=60)


def test_a_disk_too_small_stops_with_one_line_naming_the_fix() -> None:
    short = _run("1000000", "0")  # a million GiB: no disk here has that free
    assert short.returncode == 2
    lines = short.stderr.strip().splitlines()
    assert len(lines) == 1 and "the repository's disk" in lines[0] and "needs about 1000000 GiB" in lines[0]
    assert "free space there" in lines[0]


def test_enough_disk_passes_quietly() -> None:
    fits = _run("1", "0")
    assert fits.returncode == 0 and fits.stderr == ""
    assert _run("0", "0").returncode == 0
