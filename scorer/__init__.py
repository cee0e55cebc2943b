"""The shared scorer: correctness, anti-hack checks, timing and verdict for one kernel.

Imports torch, triton, numpy and the standard library, so it runs inside any CUDA or ROCm PyTorch
image, and where installed pyseccomp (the kernel worker's seccomp filter; without it the wall
reports `seccomp` missing) and pynvml (foreign load on a GPU; without it that is not watched).
`score_kernel` is the judge; kernels only ever run in `python -m scorer.workers.entry`
children (see docs/SCORER.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scorer.judge.scoring import score_kernel
    from scorer.options import ScoreOptions
    from scorer.score import SCORE_VERSION, Score

__all__ = ["score_kernel", "ScoreOptions", "Score", "SCORE_VERSION"]


def __getattr__(name: str) -> Any:
    # Lazy so that `python -m scorer.workers.entry` does not import the judge (and its subprocess
    # machinery) into the process that will host an untrusted kernel.
    if name == "score_kernel":
        from scorer.judge.scoring import score_kernel

        return score_kernel
    if name == "ScoreOptions":
        from scorer.options import ScoreOptions

        return ScoreOptions
    if name in ("Score", "SCORE_VERSION"):
        from scorer import score

        return getattr(score, name)
    raise AttributeError(name)
