"""Waiting for a state in a test: poll it with a deadline, and fail naming what never came.

A fixed sleep guesses how long something takes: too short on a loaded box (a flake), too long
everywhere else (a slow suite). These wait exactly as long as the state takes to arrive."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, overload

T = TypeVar("T")

POLL_S = 0.01


def wait_until(predicate: Callable[[], T], timeout_s: float, what: str, *, poll_s: float = POLL_S) -> T:
    """Calls `predicate` until it returns something true, and returns that. Raises AssertionError
    naming `what` once `timeout_s` has passed; the predicate is asked once more after the deadline,
    so a test descheduled past it still sees a state that did arrive."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up after {timeout_s:g} s waiting for {what}")
        time.sleep(poll_s)


@overload
async def wait_until_async(predicate: Callable[[], Awaitable[T]], timeout_s: float, what: str, *,
                           poll_s: float = ...) -> T: ...


@overload
async def wait_until_async(predicate: Callable[[], T], timeout_s: float, what: str, *, poll_s: float = ...) -> T: ...


async def wait_until_async(predicate: Callable[[], object], timeout_s: float, what: str, *,
                           poll_s: float = POLL_S) -> object:
    """`wait_until` inside an event loop: polls without blocking the loop's other tasks. The
    predicate may be a coroutine function (a look into a sandbox, say)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up after {timeout_s:g} s waiting for {what}")
        await asyncio.sleep(poll_s)
