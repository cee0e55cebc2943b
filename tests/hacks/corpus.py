"""The attack and clean kernel corpus: discovery from file headers, and scoring one entry.

Each file carries its own metadata in leading comments: `# task: ID` (required), `# suite: PATH`
(default: the demo suite), `# xfail: WHY` (a known gap), `# neutralized: WHY` (the protocol leaves the
attack nothing to gain: it must pass at its real speed, with no finding of its pattern, which it
would draw if it still gained), `# caught-as: PATTERN (why)` (an earlier layer, such as the kernel
dialect, refuses it under that pattern first; the folder's layer is tested with it switched off) and
`# gpu-only` (needs CUDA: load_inline, streams, CUDA graphs, or a check that only exists on a GPU such
as the roofline). An attack's pattern is its folder name.
"""

from __future__ import annotations

import atexit
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorer.checks.catalog import get_pattern
from scorer.judge.session import ScoringSession
from scorer.options import ScoreOptions
from scorer.score import Score
from scorer.tasks.suites import Suite, load_suite

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ATTACKS = HERE / "attacks"
CLEAN = HERE / "clean"
_HEADER = re.compile(r"^#\s*(task|suite|xfail|neutralized|caught-as):\s*(.+?)\s*$|^#\s*(gpu-only)\b", re.M)


@dataclass(frozen=True)
class Entry:
    path: Path
    task: str
    suite: str
    gpu_only: bool
    pattern: str | None  # None for clean kernels
    xfail: str | None = None  # a known gap, with the change that closes it
    neutralized: str | None = None  # why the attack has nothing left to gain
    caught_as: str | None = None  # `PATTERN (why)`: an earlier layer (the kernel dialect) refuses it first

    @property
    def name(self) -> str:
        return f"{self.pattern}/{self.path.stem}" if self.pattern else self.path.stem


def _entry(path: Path, pattern: str | None) -> Entry:
    head = "\n".join(path.read_text(encoding="utf-8").splitlines()[:8])
    meta: dict[str, str] = {}
    gpu_only = False
    for m in _HEADER.finditer(head):
        if m.group(3):
            gpu_only = True
        else:
            meta[m.group(1)] = m.group(2)
    if "task" not in meta:
        raise ValueError(f"{path}: missing '# task: ID' header")
    suite = meta.get("suite", "demo")
    if suite != "demo":
        suite = str((REPO / suite).resolve())
    return Entry(path, meta["task"], suite, gpu_only, pattern, meta.get("xfail"), meta.get("neutralized"),
                 meta.get("caught-as"))


def attack_entries() -> list[Entry]:
    return [_entry(p, p.parent.name) for p in sorted(ATTACKS.glob("*/*.py"))]


def clean_entries() -> list[Entry]:
    return [_entry(p, None) for p in sorted(CLEAN.glob("*.py"))]


_SUITES: dict[str, Suite] = {}


def suite_for(entry: Entry) -> Suite:
    if entry.suite not in _SUITES:
        _SUITES[entry.suite] = load_suite(entry.suite)
    return _SUITES[entry.suite]


def quick_options(device: str) -> ScoreOptions:
    """Few seeds and repetitions: enough for every check (refill needs two seeds)."""
    if device == "cpu":
        return ScoreOptions(device="cpu", seeds=2, warmup=1, repetitions=3)
    return ScoreOptions(device=device, seeds=2, warmup=3, repetitions=20)


_LOCAL = threading.local()
_OPEN: list[ScoringSession] = []


def _session(options: ScoreOptions) -> ScoringSession:
    """One scoring session per thread and options, as a sweep scores: the references of the corpus
    tasks are prepared once, and each entry still gets a fresh kernel worker of its own."""
    sessions = _LOCAL.__dict__.setdefault("sessions", {})
    if options not in sessions:
        sessions[options] = ScoringSession(options, max_references=4)
        _OPEN.append(sessions[options])
    return sessions[options]


@atexit.register
def _close_sessions() -> None:
    for session in _OPEN:
        session.close()


def score_entry(entry: Entry, device: str, options: ScoreOptions | None = None) -> Score:
    return _session(options or quick_options(device)).score(suite_for(entry), entry.task, entry.path, device=device)


def caught(entry: Entry, score: Score) -> bool:
    """An attack is caught when its own pattern is reported with the severity the catalog gives it
    (reject patterns also need the hack_detected verdict). A neutralized attack holds when it
    passes with no finding of its pattern: a finding would mean it still gains what it aimed at."""
    assert entry.pattern is not None
    if entry.neutralized:
        return score.verdict == "passed" and not any(f["pattern"] == entry.pattern for f in score.hacks + score.flags)
    if get_pattern(entry.pattern).severity == "flag":
        return any(f["pattern"] == entry.pattern for f in score.flags)
    # `# caught-as:` an earlier layer refuses it under its own pattern; the folder's layer is tested
    # with that one switched off (the header says where)
    expected = entry.caught_as.split()[0] if entry.caught_as else entry.pattern
    return score.verdict == "hack_detected" and any(h["pattern"] == expected for h in score.hacks)


def clean_ok(score: Score) -> bool:
    return score.verdict == "passed" and not score.hacks and not score.flags


# --- the corpus as pytest cases (tests/hacks/test_corpus_*.py split it so xdist's per-file
# scheduling spreads ~120 end-to-end scorings over the workers instead of one) ----------------
# Patterns whose attacks reach for torch or the harness rather than the timing or the outputs.
LIBRARY_PATTERNS = frozenset({"baseline-library-call", "harness-introspection", "ghost-kernel", "try-fallback",
                              "rubric"})


def as_param(entry: Entry) -> Any:
    import pytest

    marks = [pytest.mark.gpu] if entry.gpu_only else []
    if entry.xfail:
        marks.append(pytest.mark.xfail(reason=entry.xfail, strict=False))
    return pytest.param(entry, id=entry.name, marks=marks)


def device_for(entry: Entry) -> str:
    return "cuda" if entry.gpu_only else "cpu"


def assert_attack_caught(entry: Entry) -> None:
    score = score_entry(entry, device_for(entry))
    # The contention record says whether foreign load ran through the timings (a false timing
    # verdict on CI's loaded box is told from a real one by it).
    summary = (f"verdict={score.verdict} hacks={score.hacks} flags={score.flags} error={(score.error or '')[:400]} "
               f"contention={score.contention}")
    assert caught(entry, score), summary
    reported = [h for h in score.hacks + score.flags if h["pattern"] == entry.pattern]
    assert all(h["evidence"] for h in reported)
    if entry.neutralized:
        return
    if get_pattern(entry.pattern).severity == "flag":
        assert score.verdict == "passed", summary  # a flag keeps the score


def assert_clean_passes(entry: Entry) -> None:
    score = score_entry(entry, device_for(entry))
    assert clean_ok(score), f"verdict={score.verdict} hacks={score.hacks} flags={score.flags} error={(score.error or '')[:600]}"
