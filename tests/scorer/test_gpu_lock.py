"""The GPU lock (scorer/gpu/lock.py): timing excludes everyone, shared holders coexist, a waiting
timer goes before later shared requests, waits are counted, and a worker lets its shared side go
while Triton compiles (scorer/gpu/compile_gap.py). CPU, real flocks."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from scorer.gpu.lock import LOCK_DIR_ENV, GpuLock, hold_gpu, lock_path, waited_s
from tests.scorer.conftest import fast_options, timing_elsewhere
from tests.shared.waiting import wait_until


@pytest.fixture(autouse=True)
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))


def test_gpu_lock_is_exclusive() -> None:
    with hold_gpu("GPU-1234"):
        with open(lock_path("GPU-1234"), "a+") as other:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(lock_path("GPU-1234"), "a+") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # released after the block


def test_gpu_lock_shared_holders_coexist_and_block_timing() -> None:
    with hold_gpu("GPU-1", shared=True):
        with open(lock_path("GPU-1"), "a+") as other:
            fcntl.flock(other.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)  # a second correctness run may proceed
            fcntl.flock(other.fileno(), fcntl.LOCK_UN)
            with pytest.raises(BlockingIOError):  # but nobody may time meanwhile
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_gpu_lock_wait_is_counted_per_thread() -> None:
    """A scoring reports how long it queued for the GPU (durations_s.gpu_lock_wait)."""
    before = waited_s()
    with timing_elsewhere("GPU-9", 0.4):
        with hold_gpu("GPU-9", shared=True):
            pass
    assert waited_s() - before >= 0.3
    with hold_gpu("GPU-9", shared=True):  # uncontended: (almost) nothing added
        pass
    assert waited_s() - before < 1.0


def _in_thread(events: list[str], name: str, shared: bool, hold_s: float) -> threading.Thread:
    """A holder that keeps the lock for `hold_s` once it has it (a piece of work of that length)."""
    def run() -> None:
        with hold_gpu("GPU-q", shared=shared):
            events.append(f"{name} in")
            time.sleep(hold_s)
            events.append(f"{name} out")

    t = threading.Thread(target=run)
    t.start()
    return t


class _Holder:
    """A thread that asks for GPU-q's lock at once and keeps it until `let_go()`."""

    def __init__(self, events: list[str], name: str, *, shared: bool) -> None:
        self.inside, self._go = threading.Event(), threading.Event()

        def run() -> None:
            with hold_gpu("GPU-q", shared=shared):
                events.append(f"{name} in")
                self.inside.set()
                self._go.wait(30)
                events.append(f"{name} out")

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def let_go(self) -> None:
        assert self.inside.wait(10), "let go of a lock it never got"
        self._go.set()
        self._thread.join(10)


def _queued(key: str, suffix: str = ".lock") -> int:
    """flock requests blocked on the key's lock file (or its `.timers` file), as the kernel lists
    them in /proc/locks (a `->` line each): a thread that waits there is known to wait."""
    st = os.stat(lock_path(key).with_suffix(suffix))
    file_id = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    lines = Path("/proc/locks").read_text().splitlines()
    return sum(1 for line in lines if line.split()[1:2] == ["->"] and line.split()[6] == file_id)


def test_a_waiting_timer_goes_before_shared_requests_that_come_after_it() -> None:
    events: list[str] = []
    first = _Holder(events, "reader-1", shared=True)
    assert first.inside.wait(10)
    timer = _Holder(events, "timer", shared=False)
    wait_until(lambda: _queued("GPU-q") == 1, 10, "the timer to queue behind reader-1")
    late = _Holder(events, "reader-2", shared=True)
    # It could join reader-1 at once, but queues behind the announced timer.
    wait_until(lambda: _queued("GPU-q", ".timers") == 1, 10, "reader-2 to queue")
    assert not late.inside.is_set()
    first.let_go()
    assert timer.inside.wait(10)
    assert _queued("GPU-q", ".timers") == 1 and not late.inside.is_set()  # still queued while it times
    timer.let_go()
    late.let_go()
    assert events == ["reader-1 in", "reader-1 out", "timer in", "timer out", "reader-2 in", "reader-2 out"]


def test_timers_go_first_while_any_timer_waits() -> None:
    """Shared requests gather while timers wait or run, then go together: a shared request that
    came between two timers goes after both (the queue-file lock let it in between them)."""
    events: list[str] = []
    first = _Holder(events, "reader-1", shared=True)
    assert first.inside.wait(10)
    timers = [_Holder(events, "timer-1", shared=False)]
    wait_until(lambda: _queued("GPU-q") == 1, 10, "timer-1 to queue behind reader-1")
    late = _Holder(events, "reader-2", shared=True)
    wait_until(lambda: _queued("GPU-q", ".timers") == 1, 10, "reader-2 to queue behind timer-1")
    timers.append(_Holder(events, "timer-2", shared=False))
    wait_until(lambda: _queued("GPU-q") == 2, 10, "timer-2 to queue too")
    first.let_go()
    while timers:
        wait_until(lambda: any(t.inside.is_set() for t in timers), 10, "a timer to get the lock")
        inside = next(t for t in timers if t.inside.is_set())
        assert not late.inside.is_set()
        inside.let_go()
        timers.remove(inside)
    late.let_go()
    assert events[:2] == ["reader-1 in", "reader-1 out"]
    assert events[-2:] == ["reader-2 in", "reader-2 out"], events
    assert sorted(events[2:6]) == ["timer-1 in", "timer-1 out", "timer-2 in", "timer-2 out"]


def test_a_shared_holder_lets_a_waiting_timer_in_between_pieces() -> None:
    lock = GpuLock("GPU-q", shared=True)  # the key _in_thread locks
    synced: list[float] = []
    lock.acquire()
    try:
        assert not lock.timer_waiting()
        assert lock.yield_to_timer(lambda: synced.append(time.monotonic())) is False and not synced
        events: list[str] = []
        timer = _in_thread(events, "timer", False, 0.2)
        wait_until(lock.timer_waiting, 10, "the timer to announce itself")
        assert lock.yield_to_timer(lambda: synced.append(time.monotonic())) is True
        timer.join(10)
        # Synchronized before it let go, and held again only once the timer was done.
        assert len(synced) == 1 and events == ["timer in", "timer out"] and lock.held
        assert _timer_kept_out("GPU-q")
    finally:
        lock.close()


def test_a_holder_whose_device_cannot_synchronize_keeps_the_lock() -> None:
    """A kernel that faulted the device leaves work that may still run: no timer goes then."""
    lock = GpuLock("GPU-q", shared=True)
    lock.acquire()

    def faulted() -> None:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    try:
        events: list[str] = []
        timer = _in_thread(events, "timer", False, 0.05)
        wait_until(lock.timer_waiting, 10, "the timer to announce itself")
        assert lock.yield_to_timer(faulted) is False and lock.held
        wait_until(lambda: _queued("GPU-q") == 1, 10, "the timer to queue for the lock")
        assert events == []
    finally:
        lock.close()
    timer.join(10)
    assert events == ["timer in", "timer out"]


@pytest.mark.slow
def test_a_timer_waits_for_one_correctness_trial_not_the_whole_run(demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's worker lets a waiting timer in between two trials: with half a second a call and
    six trials, a timer that comes during the run waits for about one call, and the scoring (its
    comparison taking the lock in the reference worker) still passes."""
    from scorer.judge.reference import ReferenceService
    from scorer.judge.scoring import Judge

    key = "GPU-trials"
    monkeypatch.setattr(ReferenceService, "gpu_key", lambda self: key)
    task = demo.tasks["swish"]
    kernel = Path(__file__).parent / "kernels" / "slow_trials.py"
    judge = Judge(demo, task, kernel, __import__("torch").device("cpu"), fast_options(skip_timing=True))
    waited: list[float] = []

    def timer() -> None:
        # Once the workers are up, the first holder of the lock is the kernel's correctness run;
        # the timer asks as soon as that run holds it, with the whole run still ahead.
        wait_until(lambda: not _free(key), 120, "the correctness run to take the lock")
        asked = time.monotonic()
        with hold_gpu(key):
            waited.append(time.monotonic() - asked)

    neighbour = threading.Thread(target=timer)
    judge.after_start = neighbour.start
    try:
        score = judge.run()
    finally:
        neighbour.join(130)
    assert score.verdict == "passed", score.error
    assert score.durations_s["correctness_worker"] >= 2.5  # the timer came in the middle of it
    assert waited and waited[0] < 1.5, waited


def test_shared_holders_still_share_when_no_timer_waits() -> None:
    events: list[str] = []
    first = _Holder(events, "a", shared=True)
    assert first.inside.wait(10)
    second = _Holder(events, "b", shared=True)
    assert second.inside.wait(10)  # while a still holds it
    second.let_go()
    first.let_go()
    assert events == ["a in", "b in", "b out", "a out"]


def _free(key: str) -> bool:
    """Whether a timer could take the key's lock right now (nobody holds it)."""
    with open(lock_path(key), "a+") as probe:
        try:
            fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(probe.fileno(), fcntl.LOCK_UN)
        return True


def test_acquire_and_release_are_idempotent() -> None:
    lock = GpuLock("GPU-i", shared=True)
    lock.acquire()
    lock.acquire()
    assert lock.held and not _free("GPU-i")
    lock.release()  # one release lets go of it, however often it was acquired
    assert not lock.held and _free("GPU-i")
    lock.release()
    assert not lock.held and _free("GPU-i")
    lock.acquire()
    assert lock.held and not _free("GPU-i")
    lock.close()
    assert _free("GPU-i")


def _timer_asks(key: str) -> threading.Event:
    """A timer thread that asks for the key's lock now; the event is set once it has it."""
    got = threading.Event()

    def take() -> None:
        with hold_gpu(key):
            got.set()

    threading.Thread(target=take, daemon=True).start()
    return got


def _timer_kept_out(key: str) -> bool:
    """True once a timer that asks for the key's lock is known to wait for it (its request blocked
    in /proc/locks) without having got in."""
    got = _timer_asks(key)
    wait_until(lambda: got.is_set() or _queued(key) >= 1, 10, "the timer to get the lock or queue for it")
    return not got.is_set()


def test_the_shared_side_is_let_go_while_triton_compiles_and_taken_again_after() -> None:
    """Triton calls jit_cache_hook before a compile and jit_post_compile_hook after it; the calls
    here stand in for a compile (the interpreter the CPU tests run under compiles nothing)."""
    from triton import knobs

    from scorer.gpu.compile_gap import shared_gpu_work

    seen: list[str] = []

    def earlier_hook(**kwargs: object) -> bool:
        seen.append("earlier")
        return False

    knobs.runtime.jit_cache_hook = earlier_hook
    try:
        with shared_gpu_work("GPU-c") as lock:
            assert lock is not None and lock.held
            assert _timer_kept_out("GPU-c"), "a timer got in while the worker ran GPU work"
            # The timer thread above is still queued: it goes as soon as the compile begins.
            assert knobs.runtime.jit_cache_hook(key="k") is False and seen == ["earlier"]
            assert not lock.held
            with timing_elsewhere("GPU-c", 0.5) as released_at:
                knobs.runtime.jit_post_compile_hook(key="k")  # waits for that timing to end
                assert time.monotonic() >= released_at - 0.05 and lock.held
        assert knobs.runtime.jit_cache_hook is earlier_hook and knobs.runtime.jit_post_compile_hook is None
        assert _timer_asks("GPU-c").wait(5)
    finally:
        knobs.runtime.jit_cache_hook = None


@pytest.mark.slow
def test_kernel_worker_takes_the_lock_itself_for_correctness(demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU scoring given a GPU lock key takes the lock as on a GPU: another scorer's timing that
    starts once the baseline is measured (before kernel.py is imported) delays correctness, which
    the worker itself waits for (no deadlock with the judge's own holds), and the scoring still
    passes."""
    import uuid

    from scorer.judge.reference import ReferenceService
    from scorer.judge.scoring import Judge

    # The lock dir left at its default (the temp dir), as on a plain `kernelarena score`: workers
    # have a private TMPDIR, and must lock the judge's files all the same.
    monkeypatch.delenv(LOCK_DIR_ENV)
    key = f"GPU-e2e-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(ReferenceService, "gpu_key", lambda self: key)
    task = demo.tasks["swish"]
    judge = Judge(demo, task, task.solution, __import__("torch").device("cpu"), fast_options())
    holds: list[object] = []

    def neighbour_times() -> None:
        cm = timing_elsewhere(key, 4.0)
        cm.__enter__()
        holds.append(cm)

    measure = ReferenceService.measure_baseline

    def measured_then_neighbour(self, *args):  # type: ignore[no-untyped-def]
        figures = measure(self, *args)
        neighbour_times()
        return figures

    monkeypatch.setattr(ReferenceService, "measure_baseline", measured_then_neighbour)
    try:
        score = judge.run()
    finally:
        for cm in holds:
            cm.__exit__(None, None, None)  # type: ignore[attr-defined]
        for suffix in (".lock", ".timers"):  # in the shared temp dir: not left behind there
            lock_path(key).with_suffix(suffix).unlink(missing_ok=True)
    assert score.verdict == "passed", score.error
    assert score.durations_s.get("correctness_gpu_lock_wait_worker", 0.0) >= 0.5


def test_the_lock_trace_says_where_the_gpu_time_went(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Holders append to the trace as they let go (threads here, workers in a run), and the
    summary splits the window into exclusive, shared-only and idle time."""
    from scorer.gpu.lock import TRACE_ENV
    from scorer.gpu.lock_trace import occupancy, read_trace

    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv(TRACE_ENV, str(trace))
    events: list[str] = []
    # The sleeps below are the holds and gaps of known length the summary measures, not waits
    # for another thread (those are the events and the polled lock state).
    reader = _Holder(events, "reader", shared=True)
    assert reader.inside.wait(10)
    timer = _Holder(events, "timer", shared=False)
    wait_until(lambda: _queued("GPU-q") == 1, 10, "the timer to queue behind the reader")
    time.sleep(0.6)
    reader.let_go()
    assert timer.inside.wait(10)
    time.sleep(0.4)
    timer.let_go()
    time.sleep(0.3)
    with hold_gpu("GPU-q", shared=True):
        time.sleep(0.2)
    trace.open("a").write("not json\n")  # what a kernel could write there is skipped
    summary = occupancy(read_trace(trace))
    assert summary is not None and summary.exclusive_holds == 1
    assert 0.35 <= summary.exclusive_s <= 0.9
    assert 0.7 <= summary.shared_only_s <= 1.5
    assert 0.2 <= summary.idle_s <= 1.0
    assert 0.4 <= summary.timer_queued_behind_shared_s <= 0.9 and summary.timer_queued_while_idle_s < 0.05
    assert abs(summary.window_s - (summary.exclusive_s + summary.shared_only_s + summary.idle_s)) < 1e-6


def test_a_lock_folder_closed_to_the_kernels_uid_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A walled kernel worker runs under a uid of its own and takes the lock through the judge's
    files: a 0700 folder (mkdtemp's) had failed every GPU scoring as the kernel's runtime_error."""
    import shutil
    import tempfile

    from scorer.errors import ScorerUserError
    from scorer.gpu.lock import ensure_lock_files, lock_path

    folder = Path(tempfile.mkdtemp(prefix="lock-folder-", dir="/tmp"))
    try:
        monkeypatch.setenv(LOCK_DIR_ENV, str(folder))
        other = os.getuid() + 1
        with pytest.raises(ScorerUserError, match="chmod 1777"):
            ensure_lock_files("GPU-closed", other)
        ensure_lock_files("GPU-closed", os.getuid())  # the judge's own uid needs nothing more
        folder.chmod(0o1777)
        ensure_lock_files("GPU-closed", other)
        assert lock_path("GPU-closed").exists() and lock_path("GPU-closed").with_suffix(".timers").exists()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_scoring_with_a_closed_lock_folder_says_so_instead_of_blaming_the_kernel(demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: before the check, the walled worker's PermissionError on the lock made the
    demo's own solution a runtime_error (the H100's busy benchmark: every scoring)."""
    import shutil
    import tempfile

    import torch

    from scorer.errors import ScorerUserError
    from scorer.judge.reference import ReferenceService
    from scorer.judge.scoring import Judge

    if os.geteuid() != 0:
        pytest.skip("the kernel worker gets a uid of its own only where the judge is root")
    folder = Path(tempfile.mkdtemp(prefix="lock-folder-", dir="/tmp"))
    monkeypatch.setenv(LOCK_DIR_ENV, str(folder))
    monkeypatch.setattr(ReferenceService, "gpu_key", lambda self: "GPU-closed-folder")
    kernel = Path(__file__).resolve().parents[2] / "suites" / "demo" / "solutions" / "swish" / "kernel.py"
    try:
        judge = Judge(demo, demo.tasks["swish"], kernel, torch.device("cpu"), fast_options(skip_timing=True))
        with pytest.raises(ScorerUserError, match="closed to the kernel worker's own uid"):
            judge.run()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
