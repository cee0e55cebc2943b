"""tests/shared/waiting.py: a wait returns as soon as the state holds, and fails naming it at the deadline."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from tests.shared.waiting import wait_until, wait_until_async


def test_returns_the_first_true_value_as_soon_as_it_comes() -> None:
    flag = threading.Event()
    threading.Timer(0.05, flag.set).start()
    started = time.monotonic()
    assert wait_until(lambda: flag.is_set() and "set", 10, "the flag") == "set"
    assert time.monotonic() - started < 5


def test_fails_at_the_deadline_naming_what_never_came() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"gave up after 0.1 s waiting for the pigs to fly"):
        wait_until(lambda: False, 0.1, "the pigs to fly")
    assert time.monotonic() - started >= 0.1


def test_asks_once_more_after_a_deadline_it_slept_past() -> None:
    calls = []

    def late() -> bool:
        calls.append(1)
        return len(calls) == 2  # true only when asked again, after the deadline

    assert wait_until(late, 0.01, "the second look", poll_s=0.05)


async def test_the_async_wait_lets_the_loop_run_meanwhile() -> None:
    done = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, done.set)
    assert await wait_until_async(done.is_set, 10, "the event") is True
    with pytest.raises(AssertionError, match="waiting for nothing"):
        await wait_until_async(lambda: 0, 0.05, "nothing")


async def test_the_async_wait_awaits_a_coroutine_predicate() -> None:
    looks = []

    async def look() -> int:
        looks.append(1)
        return len(looks) if len(looks) >= 3 else 0

    assert await wait_until_async(look, 10, "the third look") == 3
