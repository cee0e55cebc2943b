"""The judge's own clock bound (scorer/judge/clock.py), the batch's verification (reference_role.
batch_findings) and the memory fit (scorer/gpu/memory.py), on CPU tensors."""

from __future__ import annotations

import time

import torch

from scorer.correctness.compare import Rule
from scorer.gpu.memory import choose_seeds, needed_bytes
from scorer.judge.clock import BatchClock, clock_findings, reported_ms
from scorer.workers.reference_role import BatchState, batch_findings
from tests.shared.waiting import wait_until

RULE = Rule(1e-3, 1e-3, False)


def test_bound_subtracts_round_trips_and_per_call_overhead() -> None:
    clock = BatchClock(calls=100, total_ms=112.0, round_trip_ms=1.0, round_trips=2, overhead_ms_per_call=0.1)
    assert abs(clock.bound_ms() - 1.0) < 1e-9  # (112 - 2) / 100 - 0.1
    assert BatchClock(10, 1.0, 1.0, 2, 0.5).bound_ms() == 0.0  # never negative


def test_forged_times_are_rejected_and_honest_ones_pass() -> None:
    clock = BatchClock(calls=50, total_ms=51.0, round_trip_ms=0.5, round_trips=2, overhead_ms_per_call=0.0)  # 1 ms a call
    honest = [0.95] * 20
    forged = [t / 8 for t in honest]
    assert clock_findings(honest, clock, "cuda") == []
    found = clock_findings(forged, clock, "cuda")
    assert [f.pattern for f in found] == ["timer-patching"] and "judge's own clock" in found[0].evidence
    # The upper quartile is held against the bound: a few slow reps do not lift a forged median.
    assert reported_ms([1.0, 1.0, 1.0, 9.0]) == 1.0 and reported_ms([]) is None
    assert clock_findings(forged[:15] + [5.0] * 2, clock, "cuda") != []


def _state(kernel_rows: torch.Tensor, reference_rows: torch.Tensor, challenge: list[int]) -> BatchState:
    positions = [torch.tensor([0, 3, 5])]
    state = BatchState(seeds=list(range(reference_rows.shape[0])), positions=positions)
    state.expected = [reference_rows.reshape(reference_rows.shape[0], -1)[:, positions[0]]]
    state.challenge = {r: [reference_rows[r].clone()] for r in challenge}
    state.kernel_slabs = [kernel_rows]
    state.kernel_samples = [kernel_rows.reshape(kernel_rows.shape[0], -1)[:, positions[0]].clone()]
    return state


def test_batch_rows_are_checked_at_the_secret_positions() -> None:
    ref = torch.randn(6, 2, 4)
    assert batch_findings(_state(ref.clone(), ref, [1, 4]), RULE) == []
    skipped = ref.clone()
    skipped[3] = ref[2]  # one call returned an earlier call's output
    found = batch_findings(_state(skipped, ref, [1]), RULE)
    assert found and found[0].pattern == "caching-memoization" and "[3]" in found[0].evidence
    # A kernel batch shorter than the reference's (it asked for fewer calls) is checked on its rows.
    assert batch_findings(_state(ref[:4].clone(), ref, [1, 5]), RULE) == []


def test_a_row_finished_after_the_clock_stopped_is_caught() -> None:
    ref = torch.randn(4, 8)
    late = ref.clone()
    state = _state(late, ref, [2])
    late[2] = ref[2] + 1.0  # rewritten after the samples were read: samples match, the row no longer does
    found = batch_findings(state, RULE)
    assert found and found[0].pattern == "caching-memoization"
    late = ref.clone()
    state = _state(late, ref, [2])
    late[2, 1] = ref[2, 1] + 5e-4  # a change inside the tolerance at an unsampled position...
    late[2, 0] = ref[2, 0] + 5e-4  # ...and at a sampled one, after the clock: still a different row
    assert [f.pattern for f in batch_findings(state, RULE)] == ["timer-patching"]


def test_memory_fit_drops_seeds_then_refuses_with_the_sizes() -> None:
    gb = 10**9
    assert choose_seeds(gb, 0, gb, 5, 200 * gb, True) == (5, None)
    n, why = choose_seeds(8 * gb, 0, 8 * gb, 5, 143 * gb, True)
    assert 2 <= n < 5 and why is None
    n, why = choose_seeds(40 * gb, 0, 40 * gb, 5, 143 * gb, True)
    assert n == 0 and why is not None and "needs" in why and "the device has 143.0 GB" in why
    assert needed_bytes(1, 0, 1, 2, False) < needed_bytes(1, 0, 1, 3, False)


def test_the_judge_clock_rejects_times_its_own_clock_does_not_see(demo) -> None:
    """End to end on CPU: a kernel whose later calls (the judge's batch) are far slower than the
    calls its own timer measured is rejected by the judge's bound, with both figures."""
    from pathlib import Path

    from scorer import ScoreOptions
    from scorer.judge.session import ScoringSession

    kernel = Path(__file__).parent / "kernels" / "slow_when_untimed.py"
    with ScoringSession(ScoreOptions(device="cpu", seeds=2, warmup=1, repetitions=3)) as session:
        score = session.score(demo, "swish", kernel, device="cpu")
    assert score.verdict == "hack_detected", (score.verdict, score.error, score.timing)
    (hack,) = [h for h in score.hacks if h["pattern"] == "timer-patching"]
    assert "judge's own clock" in hack["evidence"]
    assert score.timing is not None and score.timing.judge_bound_ms > 4 * score.timing.kernel_ms


def test_a_judge_makes_the_gil_change_hands_promptly(demo) -> None:
    """The clock stops in a judge thread that a worker's reply wakes; with other judges' threads in
    the process it waits for the GIL up to the switch interval (benchmarks/gil_wait.py)."""
    import sys
    from pathlib import Path

    import torch

    from scorer.judge.clock import GIL_SWITCH_S
    from scorer.judge.scoring import Judge
    from scorer.options import ScoreOptions

    default = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        task = demo.tasks["swish"]
        Judge(demo, task, Path(task.solution), torch.device("cpu"), ScoreOptions(device="cpu"))
        assert sys.getswitchinterval() <= GIL_SWITCH_S
    finally:
        sys.setswitchinterval(default)


def test_the_judge_reads_a_workers_cpu_time_over_its_whole_tree() -> None:
    import subprocess
    import sys

    from scorer.gpu.contention import tree_cpu_ms

    # a parent that idles while its child burns: the child's CPU time is the tree's
    code = ("import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', "
            "'import time\\nt=time.process_time()\\nwhile time.process_time()-t<0.6: pass\\ntime.sleep(30)']); time.sleep(30)")
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        before = tree_cpu_ms(parent.pid)
        wait_until(lambda: tree_cpu_ms(parent.pid) - before >= 500, 20, "the child's 0.5 s of CPU in the tree's",
                   poll_s=0.1)
    finally:
        for pid in _descendants(parent.pid):
            subprocess.run(["kill", "-9", str(pid)], check=False)
        parent.kill()
        parent.wait()


def _descendants(root: int) -> list[int]:
    from scorer.gpu.contention import own_tree, process_table

    return sorted(own_tree(process_table(), root) - {root})


def test_the_batch_is_read_at_the_timed_stages_load() -> None:
    """A false verdict seen with three test workers on a 2-core box (2026-12-06): the honest
    swish_cpp_loop_portable's 8 calls took 54.2 ms on the judge's clock (5.4 ms a call after the
    1.36 ms calibration) against 0.50 ms reported: the batch waited for cores far more than the
    timed stage had. Its wall time is read at the timed stage's load, from the scheduler's counts
    of the kernel thread (on a core / on a core or waiting for one) in each."""
    honest = [0.50] * 20
    waited = BatchClock(calls=8, total_ms=54.2, round_trip_ms=0.3, round_trips=2, overhead_ms_per_call=1.36)
    (wall_only,) = clock_findings(honest, waited, "cpu")
    assert wall_only.pattern == "timer-patching"
    rescaled = BatchClock(8, 54.2, 0.3, 2, 1.36, availability=0.15, timed_availability=0.9)
    assert abs(rescaled.load_factor() - 1 / 6) < 1e-9
    assert clock_findings(honest, rescaled, "cpu") == []
    # A forged clock reporting 1/8 under any one load stays 1/8 of its batch read at that load:
    # CI's failure of a CPU-time bound (the GOT interposer got 0.35 of a core in both stages and its
    # inflated 1/8 passed against the kernel's bare CPU time).
    for load in (1.0, 0.35, 0.1):
        real_ms = 9.4 / load  # a call's wall time, waits for cores included
        forged = [real_ms / 8] * 20
        clock = BatchClock(8, 8 * real_ms + 0.6, 0.3, 2, 1.36, availability=load, timed_availability=load)
        (found,) = clock_findings(forged, clock, "cpu")
        assert found.pattern == "timer-patching", load
    # ... and a batch run quieter than the timed stage is read slower, not faster
    quiet_batch = BatchClock(8, 8 * 9.4 + 0.6, 0.3, 2, 1.36, availability=1.0, timed_availability=0.25)
    (found,) = clock_findings([9.4 * 4 / 8] * 20, quiet_batch, "cpu")
    assert "read at the timed stage's load: x 4" in found.evidence
    assert BatchClock(8, 54.2, 0.3, 2, 1.36, availability=None, timed_availability=0.5).load_factor() == 1.0


def test_only_the_calls_share_of_a_timed_step_is_read_at_the_stages_load() -> None:
    """CI's false verdict of 2026-12-07: the honest swish_cpp_loop_portable reported 0.557 ms a call;
    its 8 batch calls took 27.38 ms at 98% of a core, while its timed stage had 53%, most of its
    waits falling on each step's cache flush and wake-up, not on the call. Scaled whole (x 1.86)
    the batch read 4.5 ms a call and rejected it. Only the call's share of a step's CPU work is
    scaled; a forged clock whose call is most of the step is still read at the stage's load."""
    honest = [0.557] * 20
    whole = BatchClock(8, 27.38, 0.184, 2, 1.75, availability=0.98, timed_availability=0.53)
    (found,) = clock_findings(honest, whole, "cpu")
    assert "x 1.85" in found.evidence
    ci = BatchClock(8, 27.38, 0.184, 2, 1.75, availability=0.98, timed_availability=0.53,
                    batch_cpu_ms_per_call=27.38 * 0.98 / 8, timed_cpu_ms_per_rep=14.0)
    assert 0.2 < ci.call_share() < 0.25
    assert clock_findings(honest, ci, "cpu") == []
    # a forged 1/8 of a 9.4 ms call, timed at a quarter of a core and batched quiet: the call is
    # most of its step, so the batch is read near the stage's load and the forgery shows
    forged = BatchClock(8, 8 * 9.4 + 0.6, 0.3, 2, 1.36, availability=1.0, timed_availability=0.25,
                        batch_cpu_ms_per_call=9.4, timed_cpu_ms_per_rep=11.0)
    (found,) = clock_findings([9.4 * 4 / 8] * 20, forged, "cpu")
    assert found.pattern == "timer-patching" and "the call 85% of a timed step's CPU time" in found.evidence
    # a batch that waited more than the timed stage is read at the stage's load whole
    busier = BatchClock(8, 54.2, 0.3, 2, 1.36, availability=0.15, timed_availability=0.9,
                        batch_cpu_ms_per_call=1.0, timed_cpu_ms_per_rep=14.0)
    assert abs(busier.load_factor() - 1 / 6) < 1e-9


def test_a_stage_cpu_reading_counts_work_not_waiting() -> None:
    """StageCpu on real processes: a worker that sleeps through a stage spent no CPU time whatever
    the wall clock says; one that computes on a helper thread long enough for the tree's ticks shows
    that work; a short stage falls back to the main thread's exact count."""
    import subprocess
    import sys

    from scorer.judge.clock import CoreShare, StageCpu
    from scorer.judge.stopwatch import process_state

    # Each says when its interpreter has started and then blocks (asleep, or reading stdin), so
    # the stages below read none of that start.
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(30)"],
                               stdout=subprocess.PIPE)
    threaded = subprocess.Popen([sys.executable, "-c", (
        "import threading, time, sys\n"
        "def burn():\n    t = time.thread_time()\n    while time.thread_time() - t < 0.8: pass\n"
        "print('up', flush=True); sys.stdin.readline(); threading.Thread(target=burn).start(); time.sleep(30)")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for proc in (sleeper, threaded):
            assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
            wait_until(lambda proc=proc: process_state(proc.pid) == "S", 10, f"{proc.args[-1][:20]!r} to block")
        asleep, asleep_share = StageCpu(sleeper.pid, sleeper.pid), CoreShare(sleeper.pid)
        time.sleep(0.3)
        spent = asleep.spent_ms()
        assert spent is not None and spent < 5.0, spent  # the main thread's exact count: it slept
        helper, helper_share = StageCpu(threaded.pid, threaded.pid), CoreShare(threaded.pid)
        assert threaded.stdin is not None
        threaded.stdin.write(b"go\n")
        threaded.stdin.flush()
        # the helper thread's work, through the tree's ticks
        wait_until(lambda: (helper.spent_ms() or 0.0) >= 600, 20, "the helper thread's 0.6 s of CPU", poll_s=0.1)
        assert asleep_share.share() is None  # it never ran: no share to read
        share = helper_share.share()
        assert share is None or 0.0 < share <= 1.0
    finally:
        for proc in (sleeper, threaded):
            proc.kill()
            proc.wait()


def test_a_burst_of_load_on_the_timed_stage_alone_is_no_forged_clock() -> None:
    """CI's false verdict of 2026-12-07 (ci13): honest interpreted swish kernels timed while the box
    gave their thread a core 7% of the time it wanted one, batched at 80%. Read at the stage's load
    the batch came to several times their reported times. Their reported times were above the CPU
    time their batch calls took, which no load inflates: the wall clock's excess was waiting, and
    the wall-clock rule is not applied. The same clock with a time below that CPU time is still a
    forgery."""
    burst = BatchClock(3, 3 * 12.5 + 0.6, 0.3, 2, 1.36, availability=0.8, timed_availability=0.07,
                       batch_cpu_ms_per_call=10.0, timed_cpu_ms_per_rep=11.0)
    honest = [30.0] * 3
    without_cpu = BatchClock(3, 3 * 12.5 + 0.6, 0.3, 2, 1.36, availability=0.8, timed_availability=0.07)
    (wall_only,) = clock_findings(honest, without_cpu, "cpu")  # the rule as it read before the CPU time
    assert wall_only.pattern == "timer-patching"
    assert clock_findings(honest, burst, "cpu") == []
    (found,) = clock_findings([30.0 / 16] * 3, burst, "cpu")
    assert found.pattern == "timer-patching" and "the scheduler counted 8.64 ms of CPU time a call" in found.evidence
    # A time between the CPU-time verdict and the CPU time itself is left to the wall-clock rule.
    (found,) = clock_findings([6.0] * 3, burst, "cpu")
    assert "below its thread's CPU time a batch call, 8.64 ms" in found.evidence
    # On a GPU the host's CPU time is not the kernel's work: the rule is the wall clock's alone.
    assert clock_findings(honest, burst, "cuda") != []


def test_the_honest_kernel_the_window_rejected_passes_and_the_forgery_it_was_built_for_is_caught() -> None:
    """CI's false verdict of 2026-12-07 (ci21): the honest swish_cpp_loop_portable reported 0.3044 ms
    a call, and its repetitions took 9.335 ms on the judge's clock and 9.438 ms of the worker's CPU
    time, of which only 1.43 ms were calibrated: the window check rejected it. The window check is
    gone; the batch call's CPU time judges the repetitions."""
    honest = [0.3044] * 3
    read = BatchClock(8, 8 * 1.9 + 0.4, 0.2, 2, 0.73, batch_cpu_ms_per_call=1.8)
    assert clock_findings(honest, read, "cpu") == []
    # The forgery the window was built for, a clock cut 8x on a 9.4 ms call timed under twice its
    # batch's load, is the CPU-time rule's verdict.
    forged = BatchClock(8, 8 * 9.4 + 0.6, 0.3, 2, 1.36, availability=1.0, timed_availability=0.5,
                        batch_cpu_ms_per_call=9.4 + 1.36)
    (found,) = clock_findings([2 * 9.4 / 8] * 20, forged, "cpu")
    assert "the scheduler counted 9.4 ms of CPU time a call" in found.evidence
