"""Where the KernelArena source tree is, and which parts of it a sandbox must not see."""

from __future__ import annotations

from pathlib import Path


def repo_root() -> Path:
    """The tree that holds the `sandbox` package (the repo root in a checkout)."""
    return Path(__file__).resolve().parent.parent


def solution_dirs(root: Path) -> list[Path]:
    """Reference-solution folders of the bundled suites (`suites/<suite>/solutions`)."""
    return sorted(p for p in (root / "suites").glob("*/solutions") if p.is_dir())
