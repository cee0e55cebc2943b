"""The judge's side of the kernel's timed loop: one repetition's secrets at a time.

The kernel's worker is the kernel's process: whatever it holds, the kernel can read (its frames,
its heap). So the timed repetitions' seeds are not sent with the `time` request; the worker asks
for each repetition's seed as that repetition starts, and learns whether a repetition's output is
kept for checking only after the repetition returned and the worker committed to its outputs (a
digest in the step). A kernel that reads ahead finds nothing to read, and one that keeps honest
work for checked repetitions cannot tell which those are, nor compute a kept one after being told.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from scorer.gpu.contention import run_delay_ms
from scorer.workers.protocol import ProtocolViolation, TimedNext, TimedStep


class RepFeed:
    """Answers the worker's `TimedStep`s in order: -1, 0, 1, ... up to the last repetition."""

    def __init__(self, rep_seeds: list[int], keep_reps: list[int], timer_pid: int | None = None) -> None:
        self.rep_seeds = list(rep_seeds)
        # The timed loop's thread (the walled worker's main thread): how long it waited for a CPU
        # by each step, read by the judge from the scheduler, not reported by the kernel's process.
        self.timer_pid = timer_pid
        self.delays: list[float | None] = []
        self.keep = set(keep_reps)
        self.done = -2  # no step yet
        # What each repetition's outputs hashed to, sent before the judge said whether it is kept.
        self.digests: dict[int, str] = {}

    @property
    def finished(self) -> bool:
        return self.done == len(self.rep_seeds) - 1 or not self.rep_seeds

    def __call__(self, header: dict[str, Any]) -> dict[str, Any]:
        step = TimedStep.parse(header)
        # Anything out of order (a step skipped, repeated, or sent past the last repetition) is the
        # kernel's process speaking on the channel, not the timer's loop.
        if step.done != self.done + 1 or step.done >= len(self.rep_seeds):
            raise ProtocolViolation(f"timed step {step.done} out of order (after {self.done}, "
                                    f"{len(self.rep_seeds)} repetitions)")
        if self.timer_pid is not None:
            self.delays.append(run_delay_ms(self.timer_pid))
        self.done = step.done
        if step.digest is not None:
            self.digests[step.done] = step.digest
        following = step.done + 1
        seed = self.rep_seeds[following] if following < len(self.rep_seeds) else None
        return TimedNext(keep=step.done in self.keep, seed=seed).header()

    def waited_ms(self) -> list[float] | None:
        """Each repetition's wait for a CPU (between the steps around it), or None where the
        scheduler's count could not be read at every step."""
        delays = [d for d in self.delays if d is not None]
        if not delays or len(delays) != len(self.delays):
            return None
        return [max(0.0, b - a) for a, b in pairwise(delays)]
