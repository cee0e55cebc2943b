"""Knobs of one scoring run (defaults follow the suite's rules)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScoreOptions:
    device: str = "auto"
    """'auto' (CUDA when available), 'cuda' or 'cpu'."""
    seeds: int = 5
    """Independent random input sets for correctness (seeds drawn from `secrets`)."""
    warmup: int | None = None
    """Override of the suite's warm-up repetitions."""
    repetitions: int | None = None
    """Override of the suite's timed repetitions (e.g. fewer in CPU tests)."""
    load_s: float = 300.0
    """Time limit for importing kernel.py and building ModelNew (includes JIT builds)."""
    correctness_s: float = 300.0
    """Time limit for all correctness trials (first calls compile Triton kernels)."""
    timing_s: float = 300.0
    """Time limit for the timed loop of one worker."""
    reference_s: float = 600.0
    """Time limit for the reference worker's input generation and reference outputs."""
    use_test_shapes: bool | None = None
    """Apply the task's small test shapes; None means: yes on CPU, no on CUDA."""
    skip_timing: bool = False
    """Correctness and anti-hack checks only."""
    memory_limit_bytes: int | None = 16 << 30
    """RLIMIT_AS for the kernel worker on CPU runs (CUDA needs a huge address space)."""
    alt_shapes: bool = True
    """Also verify on the task's alternative shapes (shape-specialization check)."""
    require_isolation: bool = False
    """Refuse to score (a user error) unless every wall of scorer/workers/wall.py is in force around
    the kernel's process; sweeps score for a leaderboard and ask for it unless told to accept less."""
