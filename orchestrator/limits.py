"""The one place a sweep's concurrency is bounded.

Agent loops take a slot from three semaphores (total, provider, model). Scoring takes a device
from the GPU pool and keeps it while timing, so no two measurements share a GPU; the scorer's
own file lock guards the same device against other processes on the host. A provider whose
trials keep failing on model errors is paused with exponential back-off while the others go on;
one that refuses the key is stopped for the rest of the sweep (no pause heals a wrong key).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from kernelarena.logs import get_logger
from orchestrator.spec import SweepSpec

log = get_logger("kernelarena.limits")


class Limits:
    def __init__(self, spec: SweepSpec, devices: list[str]) -> None:
        if not devices:
            raise ValueError("at least one scoring device is needed")
        self.total = asyncio.Semaphore(spec.concurrency.total)
        self._provider_limit = dict(spec.concurrency.per_provider)
        self._default_provider_limit = spec.concurrency.default_per_provider
        self._providers: dict[str, asyncio.Semaphore] = {}
        self._models = {m.name: asyncio.Semaphore(m.concurrency) for m in spec.models if m.concurrency}
        self.devices = list(devices)
        self._free_devices: asyncio.Queue[str] = asyncio.Queue()
        for device in devices:
            self._free_devices.put_nowait(device)

    def _provider(self, provider: str) -> asyncio.Semaphore:
        if provider not in self._providers:
            limit = self._provider_limit.get(provider, self._default_provider_limit)
            self._providers[provider] = asyncio.Semaphore(limit)
        return self._providers[provider]

    @asynccontextmanager
    async def agent_slot(self, provider: str, model: str) -> AsyncIterator[None]:
        # Narrowest first: a trial waiting on its own model's cap holds nothing the others need.
        model_sem = self._models.get(model)
        if model_sem is not None:
            await model_sem.acquire()
        try:
            async with self._provider(provider), self.total:
                yield
        finally:
            if model_sem is not None:
                model_sem.release()

    @asynccontextmanager
    async def scoring_device(self) -> AsyncIterator[str]:
        """Exclusive use of one scoring device for as long as the block runs."""
        device = await self._free_devices.get()
        try:
            yield device
        finally:
            self._free_devices.put_nowait(device)


@dataclass
class _ProviderHealth:
    consecutive_failures: int = 0
    pauses: int = 0
    paused_until: float = 0.0
    last_error: str = ""


@dataclass
class CircuitBreaker:
    """Pauses a provider after `threshold` consecutive model-error trials; success resets it."""

    threshold: int
    pause_s: float
    max_pause_s: float
    _health: dict[str, _ProviderHealth] = field(default_factory=dict)

    def _get(self, provider: str) -> _ProviderHealth:
        return self._health.setdefault(provider, _ProviderHealth())

    async def wait_ready(self, provider: str) -> bool:
        """Wait out a pause; False when the provider is stopped (its trials are not to run)."""
        health = self._get(provider)
        while (remaining := health.paused_until - time.monotonic()) > 0:
            if math.isinf(remaining):
                return False
            await asyncio.sleep(min(remaining, 1.0))
        return True

    def success(self, provider: str) -> None:
        health = self._get(provider)
        health.consecutive_failures = 0
        health.pauses = 0

    def failure(self, provider: str, error: str, healable: bool = True) -> float:
        """Record a model-error trial; returns the pause now imposed (0 if none). A failure that
        cannot heal (a refused key) stops the provider at once: the pause is infinite."""
        health = self._get(provider)
        if not healable:
            if not math.isinf(health.paused_until):
                log.warning("provider_stopped", provider=provider, error=error)
            health.paused_until, health.last_error = math.inf, error
            return math.inf
        health.consecutive_failures += 1
        health.last_error = error
        if health.consecutive_failures < self.threshold:
            return 0.0
        pause = min(self.pause_s * (2 ** health.pauses), self.max_pause_s)
        health.pauses += 1
        health.consecutive_failures = 0
        health.paused_until = time.monotonic() + pause
        log.warning("provider_paused", provider=provider, pause_s=pause, error=error)
        return pause

    def paused(self) -> dict[str, float]:
        """Providers paused now, with seconds left."""
        now = time.monotonic()
        return {p: h.paused_until - now for p, h in self._health.items() if h.paused_until > now}
