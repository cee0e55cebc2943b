"""No secret of a timed repetition is in the kernel's process before that repetition starts
(scorer/judge/rep_feed.py): a kernel that reads its own worker's frames finds at most the seed of
the repetition it is running, never the seeds to come, so it has nothing to compute ahead."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from scorer.judge.reference import ReferenceService
from scorer.judge.rep_feed import RepFeed
from scorer.judge.scoring import Judge
from scorer.workers.process import WorkerProcess
from scorer.workers.protocol import ProtocolViolation, TimedStep
from tests.scorer.conftest import fast_options

# An honest swish whose forward also walks every frame of its worker, down to the request loop,
# and writes down every integer it can reach from their locals (lists, dicts, objects, closures).
_FRAME_READER = '''
import json, sys
import torch, torch.nn as nn, triton, triton.language as tl

DUMP = {dump!r}

@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=m)

def _ints(value, out, depth, seen):
    if depth > 4 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        out.add(value)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in list(value)[:100000]:
            _ints(v, out, depth + 1, seen)
    elif isinstance(value, dict):
        for v in list(value.values()):
            _ints(v, out, depth + 1, seen)
    elif callable(value) and getattr(value, "__closure__", None):
        for cell in value.__closure__:
            try:
                _ints(cell.cell_contents, out, depth + 1, seen)
            except ValueError:
                pass
    elif hasattr(value, "__dict__") and not isinstance(value, (type, torch.nn.Module, torch.Tensor)):
        _ints(vars(value), out, depth + 1, seen)

class ModelNew(nn.Module):
    def forward(self, x):
        found = set()
        frame = sys._getframe(1)
        while frame is not None:
            _ints(dict(frame.f_locals), found, 0, set())
            frame = frame.f_back
        with open(DUMP, "a") as fh:
            fh.write(json.dumps(sorted(found)) + "\\n")
        out = torch.empty_like(x)
        _swish[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
'''


@pytest.mark.slow
def test_a_kernel_reading_its_workers_frames_finds_no_seed_of_a_repetition_to_come(demo, tmp_path: Path,
                                                                                    monkeypatch) -> None:
    # As if the kernel evaded every detector (the static scan and the guard see this one): the
    # judge records no finding, so the kernel reaches the timed loop, which is what is tested.
    monkeypatch.setattr(Judge, "_record", lambda self, score, findings: None)
    # Written in the kernel's own folder (the one folder behind the wall the host sees), and kept
    # from there before the scoring removes it.
    dump = tmp_path / "found.jsonl"
    request_cleanup = dump.unlink
    close = WorkerProcess.close

    def keep_the_dump(worker: WorkerProcess) -> None:
        if worker.role == "kernel" and (worker.dirs.workdir / dump.name).exists():
            shutil.copyfile(worker.dirs.workdir / dump.name, dump)
        close(worker)

    monkeypatch.setattr(WorkerProcess, "close", keep_the_dump)
    kernel = tmp_path / "kernel.py"
    kernel.write_text(_FRAME_READER.format(dump=dump.name))
    options = fast_options(repetitions=6, warmup=2, seeds=2)
    task = demo.tasks["swish"]
    judge = Judge(demo, task, kernel, torch.device("cpu"), options)
    ref = ReferenceService(demo, task, judge.device, options, judge.overrides, tmp_path / "ref", judge.repetitions)
    judge.reference = ref
    try:
        score = judge.run()
        calls = [set(json.loads(line)) for line in dump.read_text().splitlines()]
    finally:
        ref.close()
        request_cleanup(missing_ok=True)
    assert score.verdict == "passed" and score.timing is not None, score.error
    rep_seeds = ref.plan.rep_seeds
    # The calls of the time stage: warm-up (2) and the repetitions (6), between correctness and the batch.
    visible = [len(found & set(rep_seeds)) for found in calls]
    assert max(visible) <= 1, f"rep seeds visible per call: {visible}"
    # The first call that sees any rep seed sees the first repetition's, and no call sees one ahead
    # of the calls made so far.
    seen_by_order = [[rep_seeds.index(s) for s in found & set(rep_seeds)] for found in calls]
    started = 0
    for indices in seen_by_order:
        for index in indices:
            assert index <= started, f"a call saw repetition {index}'s seed before repetition {started} ran: {seen_by_order}"
            started = max(started, index + 1)
    assert started == len(rep_seeds), "each repetition's seed reached the worker as it started"


def _step(done: int) -> dict:
    return TimedStep(done, None if done < 0 else f"{done:064x}").header()


def test_rep_feed_answers_in_order_and_tells_what_is_kept_only_afterwards() -> None:
    feed = RepFeed([11, 22, 33], keep_reps=[1])
    first = feed(_step(-1))
    assert first == {"op": "timed_next", "keep": False, "seed": 11}
    assert feed(_step(0))["seed"] == 22
    assert feed(_step(1)) == {"op": "timed_next", "keep": True, "seed": 33}
    assert not feed.finished
    assert feed(_step(2)) == {"op": "timed_next", "keep": False, "seed": None}
    assert feed.finished
    assert feed.digests == {0: f"{0:064x}", 1: f"{1:064x}", 2: f"{2:064x}"}
    with pytest.raises(ProtocolViolation):
        feed(_step(3))  # past the last repetition
    skipping = RepFeed([1, 2, 3], keep_reps=[])
    skipping(_step(-1))
    with pytest.raises(ProtocolViolation):
        skipping(_step(1))  # a step skipped: the kernel reading ahead on the channel
    with pytest.raises(ProtocolViolation):
        RepFeed([1], [])({"timed_step": -1, "digest": None, "extra": 1})


def test_a_timed_step_must_commit_to_its_outputs_before_it_learns_whether_they_are_kept() -> None:
    feed = RepFeed([11, 22], keep_reps=[0])
    feed(_step(-1))
    for uncommitted in ({"timed_step": 0, "digest": None}, {"timed_step": 0}, {"timed_step": 0, "digest": "ab" * 31},
                        {"timed_step": 0, "digest": "G" * 64}):
        with pytest.raises(ProtocolViolation):
            feed(uncommitted)
    with pytest.raises(ProtocolViolation):
        RepFeed([1], [])({"timed_step": -1, "digest": "0" * 64})  # nothing has run yet to commit to
