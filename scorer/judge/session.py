"""Scoring many kernels: warm kernel workers and one prepared reference per task.

A scoring of one kernel spends most of its wall time on things that do not depend on the kernel:
starting a Python with torch and triton imported, and preparing the task's reference (inputs,
outputs, the float64 sample, the baseline's timing and judge-clocked batch). A session keeps the
reference of the tasks it scored last (their secret seeds drawn once for the session, so the
baseline is measured once), and keeps kernel workers started ahead (and, once it has met a new
task, a reference worker for the next one): each kernel still gets a fresh process of its own that
no other kernel ever uses, and it is killed when that kernel is done.
Not thread-safe: one session per thread.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

from scorer.errors import ScorerBroken
from scorer.judge.reference import ReferenceService
from scorer.judge.scoring import Judge, _deny_same_user_access, kernel_worker, resolve_device
from scorer.options import ScoreOptions
from scorer.score import Score
from scorer.tasks.suites import Suite
from scorer.workers.process import WorkerDirs, WorkerProcess

# A pooled worker that kept its scoring waiting this long was not ready; the pool grows to at most this.
_WAITED_S = 0.5
_MAX_DEPTH = 3


class ScoringSession:
    def __init__(self, options: ScoreOptions | None = None, *, max_references: int = 1, warm_workers: int = 1) -> None:
        self.options = options or ScoreOptions()
        self.max_references = max(1, max_references)
        self.warm_workers = max(0, warm_workers)
        self.base = Path(tempfile.mkdtemp(prefix="kernelarena-session-"))
        os.chmod(self.base, 0o700)
        self._references: OrderedDict[tuple[Any, ...], ReferenceService] = OrderedDict()
        self._pool: dict[str, list[WorkerProcess]] = {}
        self._depth: dict[str, int] = {}
        self._spare_reference: WorkerProcess | None = None
        self._wants_spare = False
        self._count = 0
        _deny_same_user_access()

    def __enter__(self) -> ScoringSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        try:
            for ref in self._references.values():
                ref.close()
            for workers in self._pool.values():
                for w in workers:
                    w.close()
            if self._spare_reference is not None:
                self._spare_reference.close()
        finally:
            self._references.clear()
            self._pool.clear()
            self._spare_reference = None
            shutil.rmtree(self.base, ignore_errors=True)

    def _new_dir(self, role: str) -> Path:
        self._count += 1
        path = self.base / f"{role}-{self._count}"
        path.mkdir(mode=0o700)
        return path

    def _kernel_worker(self, device_type: str) -> tuple[WorkerProcess, bool]:
        """A worker from the pool (True), or one started now (False)."""
        pool = self._pool.setdefault(device_type, [])
        return (pool.pop(0), True) if pool else (self._start_kernel_worker(device_type), False)

    def _deepen_if_waited(self, device_type: str, from_pool: bool, waited_s: float) -> None:
        """Scorings back to back on a GPU (2-3 s each) outrun a worker's start (imports, the CUDA
        context and the hold: 5-7 s on the H200): one that waited for its pooled worker makes the
        pool as deep as it grows at once (grown one a wait, the H200's demo scorings waited again at
        each step of the ramp). A sweep, whose agents work minutes between scorings, never waits and
        keeps one idle context per session."""
        if from_pool and device_type != "cpu" and waited_s > _WAITED_S:
            self._depth[device_type] = max(self.warm_workers, _MAX_DEPTH)

    def _start_kernel_worker(self, device_type: str) -> WorkerProcess:
        worker = kernel_worker(WorkerDirs.create(self._new_dir("kernel"), "kernel"), self.options, device_type)
        worker.start()  # Popen returns at once: the interpreter starts while the judge works
        return worker

    def _start_ahead(self, device_type: str) -> None:
        """Starts the workers the next scorings take: kernel workers up to `warm_workers` (or the
        depth back-to-back scorings grew the pool to), and a reference worker for the next new task
        once this scoring met one."""
        pool = self._pool.setdefault(device_type, [])
        while len(pool) < max(self.warm_workers, self._depth.get(device_type, 0)):
            pool.append(self._start_kernel_worker(device_type))
        if self._wants_spare and self._spare_reference is None:
            spare = WorkerProcess("reference", WorkerDirs.create(self._new_dir("reference-spare"), "reference"),
                                  warm_device=device_type)
            spare.start()
            self._spare_reference = spare
        self._wants_spare = False

    def _reference(self, suite: Suite, judge: Judge) -> tuple[ReferenceService, bool]:
        """The task's reference, and whether its worker starts only now (no spare was ready)."""
        key = (str(suite.root), judge.task.id, str(judge.device), tuple(sorted(judge.overrides.items())),
               judge.repetitions, self.options.seeds)
        if key in self._references:
            self._references.move_to_end(key)
            return self._references[key], False
        while len(self._references) >= self.max_references:
            _, old = self._references.popitem(last=False)
            old.close()
        spare = self._reference_worker()
        ref = ReferenceService(suite, judge.task, judge.device, self.options, judge.overrides,
                               self._new_dir("reference"), judge.repetitions, worker=spare)
        self._references[key] = ref
        return ref, spare is None

    def _reference_worker(self) -> WorkerProcess | None:
        """The reference worker started when the last new task came (none the first time); a
        spare for the next new task is started ahead (`_start_ahead`): a session that meets a new
        task once starts one reference worker ahead, not one per scoring."""
        worker, self._spare_reference = self._spare_reference, None
        self._wants_spare = bool(self.warm_workers)
        return worker

    def _settle(self) -> None:
        """Waits for the workers started ahead to finish their start-up, so none of it runs beside
        a timed stage; one that died on the way is dropped (the next scoring starts another)."""
        for workers in self._pool.values():
            for w in list(workers):
                if not w.wait_started(self.options.load_s):
                    workers.remove(w)
                    w.close()
        spare = self._spare_reference
        if spare is not None and not spare.wait_started(self.options.reference_s):
            self._spare_reference = None
            spare.close()

    def _drop(self, ref: ReferenceService | None) -> None:
        for key, held in list(self._references.items()):
            if held is ref:
                del self._references[key]
                held.close()

    def score(self, suite: Suite, task_id: str, kernel_path: Path | str, device: str = "auto") -> Score:
        task = suite.task(task_id)
        requested = device if device != "auto" else self.options.device
        resolved = resolve_device(requested, task, suite)
        judge = Judge(suite, task, Path(kernel_path), resolved, self.options)
        judge.reference, cold_reference = self._reference(suite, judge)
        worker, from_pool = self._kernel_worker(resolved.type)
        judge.kernel_worker = worker
        if resolved.type == "cpu":
            # A CPU times on the cores the workers started ahead would import torch on: they start
            # now, as early as possible, and timing waits until they are done (`settle`).
            self._start_ahead(resolved.type)
            judge.before_timing = self._settle
        else:
            if from_pool and not cold_reference:
                # This scoring's own workers were started ahead: the next ones start now, beside it
                # (a warm scoring takes 2-3 s on the H200, less than a worker's start; a new task's
                # reference preparation gives them its seconds). On a GPU nothing waits for them:
                # their device work queues for the GPU lock's shared side, so it cannot run inside
                # a timed section, and their imports run on other cores.
                self._start_ahead(resolved.type)
            # A scoring whose own workers start now starts the next ones once its own are up, not
            # beside them: four interpreters starting at once (a session's first scoring, eight
            # sessions on the H200) slowed the two it needs. Once the kernel's worker answered, a
            # wait for it deepens the pool there and then.
            def started() -> None:
                self._deepen_if_waited(resolved.type, from_pool, judge.durations.get("kernel_spawn", 0.0))
                self._start_ahead(resolved.type)

            judge.after_start = started
        try:
            return judge.run()
        except ScorerBroken:
            self._drop(judge.reference)
            raise
        finally:
            shutil.rmtree(worker.dirs.workdir.parent, ignore_errors=True)
