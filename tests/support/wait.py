"""``eventually()``: the suite's one way to wait for something it cannot await.

Poll ``check`` until it returns something truthy and return that, or fail
with ``what`` at the deadline. Deadlines are generous (the suite runs on a
loaded machine, two workers per two cores): they bound a wait for something
that does happen, they never measure how fast it happens.

In a coroutine, ``await eventually(...)``: the check may be a plain function
or a coroutine function, and the loop keeps running between looks (a
receiver in the test's own loop gets its requests). Outside one (a
synchronous test, a thread), ``eventually(...)`` blocks and returns the
result. Which one is decided by whether an event loop runs in this thread,
so a synchronous poll can never block a loop.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

TIMEOUT_S = 15.0
INTERVAL_S = 0.05


class NotYet(AssertionError):
    """The condition did not hold by the deadline."""


def eventually(check: Callable[[], Any], *, timeout_s: float = TIMEOUT_S, interval_s: float = INTERVAL_S, what: str = "") -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _blocking(check, timeout_s=timeout_s, interval_s=interval_s, what=what)
    return _polling(check, timeout_s=timeout_s, interval_s=interval_s, what=what)


def _blocking(check: Callable[[], Any], *, timeout_s: float, interval_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        if result := check():
            return result
        if time.monotonic() > deadline:
            raise NotYet(f"not within {timeout_s} s: {what or _name(check)}")
        time.sleep(interval_s)


async def _polling(check: Callable[[], Any], *, timeout_s: float, interval_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise NotYet(f"not within {timeout_s} s: {what or _name(check)}")
        await asyncio.sleep(interval_s)


def _name(check: Callable[[], Any]) -> str:
    return getattr(check, "__qualname__", repr(check))
