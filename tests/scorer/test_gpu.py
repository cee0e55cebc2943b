"""The CUDA path end to end (device events, NaN poisoning, profiler census); skipped without a GPU."""

from __future__ import annotations

import pytest
import torch

from scorer import ScoreOptions, score_kernel
from scorer.tasks.suites import Suite
from tests.shared.waiting import wait_until

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _needs_cuda() -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")


def test_demo_swish_on_cuda(demo: Suite) -> None:
    solution = demo.tasks["swish"].solution
    assert solution is not None
    score = score_kernel(demo, "swish", solution, device="cuda", options=ScoreOptions(device="cuda", repetitions=20, warmup=3))
    assert score.correctness is not None and score.correctness.passed == score.correctness.trials
    assert score.environment["gpu"] and score.environment["cuda"]
    if score.timing is not None:
        assert score.timing.timer == "cuda_event" and len(score.timing.kernel_times_ms) == 20
        # its launches take plain arguments: each timed one ran in the launch window
        assert score.timing.launch_window.get("open", 0) >= 20 and score.timing.launch_window.get("watched") == 0


def test_workers_forked_by_the_fork_server_use_cuda(demo: Suite, tmp_path, monkeypatch) -> None:
    """The server imports torch and triton but never starts the CUDA driver: its children make
    their own context (the warm-up), and a whole scoring through them passes on the GPU."""
    from scorer.workers import forkserver
    from scorer.workers.process import WorkerDirs, WorkerProcess

    # This test's own server: an earlier test may have left one running, or dropped it.
    monkeypatch.setattr(forkserver, "_SERVER", None)
    monkeypatch.setattr(forkserver, "_FAILURES", 0)
    monkeypatch.delenv(forkserver.ENV_SWITCH, raising=False)
    worker = WorkerProcess("kernel", WorkerDirs.create(tmp_path, "kernel"), warm_device="cuda")
    worker.start()
    try:
        assert isinstance(worker.proc, forkserver.ForkedProcess), forkserver.last_failure()
        assert worker.wait_started(300), worker.log_tail()
        maps = open(f"/proc/{worker.proc.pid}/maps").read()
        assert "libcuda" in maps  # the warm-up made its context
        server = forkserver._SERVER
        assert server is not None and server.proc.poll() is None  # it forked: its driver was not started
    finally:
        worker.close()
        if forkserver._SERVER is not None:
            forkserver._SERVER.close()
    solution = demo.tasks["row_sum"].solution
    assert solution is not None
    score = score_kernel(demo, "row_sum", solution, device="cuda", options=ScoreOptions(device="cuda", repetitions=20, warmup=3))
    assert score.verdict == "passed", score.error


def test_cuda_event_timer_and_kept_outputs() -> None:
    from scorer.gpu.timing import TimingPlan, capture_clock, time_forward

    dev = torch.device("cuda")
    sets = [[torch.randn(1024, 1024, device=dev)] for _ in range(3)]
    run = time_forward(lambda x: x @ x, sets[0], lambda r: sets[r % 3], TimingPlan(2, 10, True), dev, capture_clock(),
                       on_output=lambda rep, out: out.cpu() if rep in (1, 7) else None)
    assert run.timer == "cuda_event" and run.event_times_ms is not None and len(run.event_times_ms) == 10
    assert all(t > 0 for t in run.event_times_ms) and len(run.host_times_ms) == 10
    assert torch.allclose(run.kept_outputs[7], (sets[1][0] @ sets[1][0]).cpu())


def test_drain_time_shows_work_left_on_a_side_stream() -> None:
    from scorer.checks.dynamic import timing_findings
    from scorer.gpu.timing import TimingPlan, capture_clock, time_forward

    dev = torch.device("cuda")
    side = torch.cuda.Stream()
    sets = [[torch.randn(2048, 2048, device=dev)] for _ in range(2)]

    def joined(x: torch.Tensor) -> torch.Tensor:
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = x @ x @ x
        torch.cuda.current_stream().wait_stream(side)
        return y

    def unjoined(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        with torch.cuda.stream(side):
            torch.matmul(x @ x, x, out=out)
        return out

    def leaves_side_current(x: torch.Tensor) -> torch.Tensor:
        torch.cuda.set_stream(side)  # the end event must not follow it there
        return x @ x @ x

    plan = TimingPlan(2, 20, True)
    for fn, caught in ((joined, False), (unjoined, True), (leaves_side_current, True)):
        run = time_forward(fn, sets[0], lambda r: sets[r % len(sets)], plan, dev, capture_clock())
        assert run.drain_ms is not None and run.idle_drain_ms is not None
        found = timing_findings(run.event_times_ms or [], run.host_times_ms, run.drain_ms, run.idle_drain_ms)
        assert any(f.pattern == "stream-injection" for f in found) == caught, (fn.__name__, found)
    torch.cuda.set_stream(torch.cuda.default_stream())


def test_hold_fills_every_sm() -> None:
    from scorer.gpu.gate import _hold_kernel, make_gate

    gate = make_gate(torch.device("cuda"), _hold_kernel)
    assert gate is not None
    gate()
    torch.cuda.synchronize()
    assert gate.sms_used() == torch.cuda.get_device_properties(0).multi_processor_count


def test_side_stream_work_cannot_run_during_the_hold() -> None:
    """Work put on a side stream at the top of forward (joined before returning) runs during a
    spin on the caller's stream and escapes the events (the control); the hold keeps it inside."""
    import dataclasses

    from scorer.gpu.timing import TimingPlan, capture_clock, time_forward

    dev = torch.device("cuda")
    side = torch.cuda.Stream()
    sets = [[torch.randn(1024, 1024, device=dev)] for _ in range(2)]

    def honest(x: torch.Tensor) -> torch.Tensor:
        return x @ x

    def early_side_stream(x: torch.Tensor) -> torch.Tensor:
        # No wait on the caller's stream first (the inputs are ready): that wait would queue the
        # side work behind whatever precedes the start event.
        with torch.cuda.stream(side):
            y = x @ x
        torch.cuda.current_stream().wait_stream(side)
        return y

    def median_ms(fn, clock) -> float:
        times = sorted(time_forward(fn, sets[0], lambda r: sets[r % len(sets)], TimingPlan(3, 30, True), dev, clock).times_ms)
        return times[len(times) // 2]

    held = capture_clock()
    spun = dataclasses.replace(held, hold_kernel=None, gpu_spin=lambda _cycles: torch.cuda._sleep(400_000))
    assert median_ms(early_side_stream, spun) < 0.5 * median_ms(honest, spun)  # the hole a spin leaves
    assert median_ms(early_side_stream, held) >= 0.8 * median_ms(honest, held)


def test_poison_leaves_nan_in_fresh_allocations() -> None:
    from scorer.checks.poison import poison_memory

    dev = torch.device("cuda")
    poison_memory(dev, [((256, 256), torch.float32)])
    fresh = torch.empty(256, 256, device=dev)
    assert bool(torch.isnan(fresh).any())


def test_profiler_sees_device_kernels() -> None:
    from scorer.checks.census import profile_device_time

    x = torch.randn(512, 512, device="cuda")
    out, times = profile_device_time(lambda: torch.sigmoid(x))
    assert out.shape == x.shape and times


_PRODUCER = """
import json, sys, torch
from scorer.workers.device_share import share
x = torch.arange(4 * 1024, dtype=torch.float32, device="cuda").reshape(64, 64)[:, 3:40]
print(json.dumps(share([x, torch.full((5,), 7, dtype=torch.int64, device="cuda")])), flush=True)
sys.stdin.readline()
"""


def test_shared_outputs_open_in_another_process() -> None:
    """The transport the kernel's outputs take to the reference worker on a GPU: CUDA IPC handles,
    a strided view included; a descriptor that claims more than its storage is refused."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from scorer.workers.device_share import ShareError, open_shared

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", _PRODUCER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(root)})
    try:
        descs = json.loads(proc.stdout.readline())
        dev = torch.device("cuda")
        got = open_shared(descs, dev)
        expected = torch.arange(4 * 1024, dtype=torch.float32, device=dev).reshape(64, 64)[:, 3:40]
        assert torch.equal(got[0], expected) and torch.equal(got[1], torch.full((5,), 7, device=dev))
        forged = dict(descs[1], shape=[1 << 20])
        with pytest.raises(ShareError):
            open_shared([forged], dev)
        del got
    finally:
        proc.stdin.write("done\n")
        proc.stdin.close()
        proc.wait(timeout=60)


def test_judge_bound_holds_honest_solutions() -> None:
    """On the GPU the judge's clock passes honest solutions (the verdict holds the bound's check);
    where a call is device-bound (half a millisecond and more) the bound sees the work: at least
    half the event median. Small kernels' batches are host-bound and their bound may read 0, which
    only makes the check permissive (docs/SCORER.md, the judge's clock)."""
    from scorer.judge.session import ScoringSession
    from scorer.tasks.suites import load_suite

    cases = [("demo", "swish", False), ("demo", "softmax", False),
             ("kernelbench", "level1_1_square_matmul", True), ("kernelbench", "level3_9_rmsnorm_attention_block", True)]
    with ScoringSession(ScoreOptions(device="cuda", repetitions=30, warmup=3)) as session:
        for suite_name, task, device_bound in cases:
            suite = load_suite(suite_name)
            score = session.score(suite, task, suite.tasks[task].solution, device="cuda")
            assert score.verdict == "passed", (task, score.error)
            t = score.timing
            assert t is not None and t.judge_calls >= 3 and t.judge_bound_ms is not None and t.kernel_ms
            if device_bound:
                assert t.judge_bound_ms > 0.5 * t.kernel_ms, (task, t.judge_bound_ms, t.kernel_ms)

def test_session_on_cuda_starts_its_next_workers_warm_and_does_not_wait_for_them(demo: Suite) -> None:
    """On a GPU a session starts the workers of its next scorings once a scoring's own are up
    (not beside them), they make their CUDA context and the hold while they wait, and no scoring
    waits for them before timing (their device work queues for the GPU lock)."""
    from scorer.judge.session import ScoringSession

    with ScoringSession(ScoreOptions(device="cuda")) as session:
        first = session.score(demo, "swish", demo.tasks["swish"].solution, device="cuda")
        (warm,) = session._pool["cuda"]
        spare = session._spare_reference
        assert spare is not None and warm.warm_device == spare.warm_device == "cuda"
        second = session.score(demo, "row_sum", demo.tasks["row_sum"].solution, device="cuda")
        assert first.verdict == second.verdict == "passed", (first.error, second.error)
        assert "settle" not in first.durations_s and "settle" not in second.durations_s
        # row_sum ran in the workers started during swish's scoring (the kernel worker is gone with
        # its kernel, the reference serves row_sum), and new ones were started for what comes next.
        assert warm.proc.poll() is not None
        (ref,) = session._references.values()
        assert ref.worker is spare and spare.proc.poll() is None
        assert session._pool["cuda"] and session._pool["cuda"][0] is not warm
        # Both warm (row_sum's reference prepared, the worker pooled): the next start beside it.
        pooled = list(session._pool["cuda"])
        third = session.score(demo, "row_sum", demo.tasks["row_sum"].solution, device="cuda")
        assert third.verdict == "passed", third.error
        assert "reference" not in third.durations_s and pooled[0].proc.poll() is not None
        assert session._pool["cuda"] and all(w not in pooled[:1] for w in session._pool["cuda"])


def test_a_real_triton_compile_lets_a_waiting_timer_in(tmp_path, monkeypatch) -> None:
    """scorer.gpu.compile_gap on a real compile: a timer queued behind a worker's shared side gets the
    GPU while Triton compiles a kernel the worker is about to run, and the kernel then runs with
    the shared side taken again."""
    import threading
    import time

    import triton
    import triton.language as tl

    from scorer.gpu.compile_gap import shared_gpu_work
    from scorer.gpu.lock import LOCK_DIR_ENV, hold_gpu

    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))

    @triton.jit
    def fresh(x_ptr, n, scale: tl.constexpr):  # a constexpr no cache has: it compiles now
        i = tl.arange(0, 1024)
        tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) * scale, mask=i < n)

    x = torch.ones(1024, device="cuda")
    timer_in: list[float] = []

    def timer() -> None:
        with hold_gpu("GPU-compile"):
            timer_in.append(time.monotonic())

    with shared_gpu_work("GPU-compile") as lock:
        t = threading.Thread(target=timer)
        t.start()
        wait_until(lock.timer_waiting, 10, "the timer to announce itself")
        assert not timer_in  # the worker holds the shared side
        fresh[(1,)](x, 1024, scale=int(time.time_ns() % 997) + 3)
        torch.cuda.synchronize()
        assert lock is not None and lock.held
        t.join(10)
    assert timer_in, "the timer did not get the GPU during the compile"


_HOG = """
import sys, time, torch
free, total = torch.cuda.mem_get_info()
hog = torch.empty(int(free - 0.12 * total), dtype=torch.uint8, device="cuda")
print("ready", flush=True)
sys.stdin.readline()
"""


def test_an_out_of_memory_on_a_crowded_gpu_is_not_the_kernels_verdict(demo: Suite, tmp_path) -> None:
    """scorer/gpu/crowding.py on the device: another process holds all but 12% of the GPU. A
    kernel whose scratch (a fifth of the device) would fit alone gets no verdict (ScorerBroken, the
    sweep scores it again); one that asks for more than the whole device gets its runtime_error,
    with what the device held written in the error."""
    import subprocess
    import sys

    pytest.importorskip("pynvml")
    from scorer.errors import ScorerBroken

    total = torch.cuda.mem_get_info()[1]
    solution = demo.tasks["swish"].solution
    assert solution is not None

    def kernel(scratch: int):
        path = tmp_path / f"scratch_{scratch}.py"
        path.write_text(solution.read_text() + (
            "\n\n_Plain = ModelNew\n\n\nclass ModelNew(_Plain):\n    def forward(self, x):\n"
            f"        scratch = torch.empty({scratch}, dtype=torch.uint8, device=x.device)\n"
            "        return super().forward(x)\n"))
        return path

    hog = subprocess.Popen([sys.executable, "-c", _HOG], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert hog.stdout.readline().strip() == "ready"
        options = ScoreOptions(device="cuda", repetitions=5, warmup=1)
        with pytest.raises(ScorerBroken, match="not the kernel's verdict"):
            score_kernel(demo, "swish", kernel(int(0.2 * total)), device="cuda", options=options)
        score = score_kernel(demo, "swish", kernel(int(1.05 * total)), device="cuda", options=options)
        assert score.verdict in ("runtime_error", "incorrect"), score.verdict
        assert "held by" in (score.error or ""), score.error
    finally:
        hog.stdin.write("done\n")
        hog.stdin.close()
        hog.wait(timeout=60)
