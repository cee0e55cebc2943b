"""Concurrency limits and the provider circuit breaker, exercised with real asyncio tasks."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from orchestrator.limits import CircuitBreaker, Limits
from orchestrator.spec import parse_spec


def _spec(total: int, per_provider: dict[str, int], model_cap: int | None = None):
    return parse_spec({
        "name": "t",
        "models": [{"id": "openai:a", "concurrency": model_cap}, {"id": "openai:b"}, {"id": "scripted:reference"}],
        "suites": [{"name": "demo"}],
        "concurrency": {"total": total, "per_provider": per_provider},
    }, "t")


async def _peak(limits: Limits, jobs: list[tuple[str, str]]) -> tuple[Counter[str], int, Counter[str]]:
    running: Counter[str] = Counter()
    running_models: Counter[str] = Counter()
    peak: Counter[str] = Counter()
    peak_models: Counter[str] = Counter()
    total_peak = 0

    async def job(provider: str, model: str) -> None:
        nonlocal total_peak
        async with limits.agent_slot(provider, model):
            running[provider] += 1
            running_models[model] += 1
            peak[provider] = max(peak[provider], running[provider])
            peak_models[model] = max(peak_models[model], running_models[model])
            total_peak = max(total_peak, sum(running.values()))
            await asyncio.sleep(0.01)
            running[provider] -= 1
            running_models[model] -= 1

    await asyncio.gather(*(job(p, m) for p, m in jobs))
    return peak, total_peak, peak_models


async def test_provider_model_and_total_limits_hold() -> None:
    limits = Limits(_spec(total=5, per_provider={"openai": 3}, model_cap=1), ["cpu"])
    jobs = [("openai", "openai:a")] * 10 + [("openai", "openai:b")] * 10 + [("scripted", "scripted:reference")] * 10
    peak, total_peak, peak_models = await _peak(limits, jobs)
    assert peak["openai"] == 3
    assert peak_models["openai:a"] == 1
    assert total_peak == 5


async def test_scoring_device_is_exclusive_per_device() -> None:
    limits = Limits(_spec(8, {}), ["cuda:0", "cuda:1"])
    holders: dict[str, int] = {"cuda:0": 0, "cuda:1": 0}
    overlap = []

    async def score() -> str:
        async with limits.scoring_device() as device:
            holders[device] += 1
            overlap.append(holders[device])
            await asyncio.sleep(0.01)
            holders[device] -= 1
            return device

    used = await asyncio.gather(*(score() for _ in range(8)))
    assert max(overlap) == 1
    assert set(used) == {"cuda:0", "cuda:1"}


async def test_circuit_breaker_pauses_then_recovers() -> None:
    breaker = CircuitBreaker(threshold=2, pause_s=0.2, max_pause_s=0.3)
    assert breaker.failure("openai", "429") == 0
    assert breaker.failure("openai", "429") == 0.2
    assert "openai" in breaker.paused() and "anthropic" not in breaker.paused()
    start = time.monotonic()
    await breaker.wait_ready("anthropic")  # others are not held up
    assert time.monotonic() - start < 0.05
    await breaker.wait_ready("openai")
    assert time.monotonic() - start >= 0.15
    breaker.failure("openai", "429")
    assert breaker.failure("openai", "429") == 0.3  # doubled, capped
    breaker.success("openai")
    breaker.failure("openai", "x")
    assert breaker.failure("openai", "x") == 0.2  # back-off reset by a success
