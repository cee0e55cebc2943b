"""The CUDA path end to end (device events, NaN poisoning, profiler census); skipped without a GPU."""

from __future__ import annotations

import pytest
import torch

from scorer import ScoreOptions, score_kernel
from scorer.suites import Suite

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


def test_cuda_event_timer_and_kept_outputs() -> None:
    from scorer.timing import TimingPlan, capture_clock, time_forward

    dev = torch.device("cuda")
    sets = [[torch.randn(1024, 1024, device=dev)] for _ in range(3)]
    run = time_forward(lambda x: x @ x, sets, TimingPlan(2, 10, True, (1, 7)), dev, capture_clock(),
                       on_output=lambda rep, out: out.cpu() if rep in (1, 7) else None)
    assert run.timer == "cuda_event" and run.event_times_ms is not None and len(run.event_times_ms) == 10
    assert all(t > 0 for t in run.event_times_ms) and len(run.host_times_ms) == 10
    assert torch.allclose(run.kept_outputs[7], (sets[1][0] @ sets[1][0]).cpu())


def test_poison_leaves_nan_in_fresh_allocations() -> None:
    from scorer.poison import poison_memory

    dev = torch.device("cuda")
    poison_memory(dev, [((256, 256), torch.float32)])
    fresh = torch.empty(256, 256, device=dev)
    assert bool(torch.isnan(fresh).any())


def test_profiler_sees_device_kernels() -> None:
    from scorer.census import profile_device_kernels

    x = torch.randn(512, 512, device="cuda")
    out, names = profile_device_kernels(lambda: torch.sigmoid(x))
    assert out.shape == x.shape and names
