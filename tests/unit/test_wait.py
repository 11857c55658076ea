"""tests/support/wait.py: the suite's one poll helper."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.wait import NotYet, eventually


def test_outside_a_loop_it_blocks_and_returns_the_first_truthy_result():
    looks = iter([0, None, "", "there"])
    assert eventually(lambda: next(looks), interval_s=0.001) == "there"


def test_outside_a_loop_it_fails_at_the_deadline_naming_what_it_waited_for():
    with pytest.raises(NotYet, match="the receiver's callback"):
        eventually(lambda: False, timeout_s=0.05, interval_s=0.01, what="the receiver's callback")


async def test_in_a_coroutine_it_is_awaited_and_the_loop_runs_between_looks():
    seen: list[int] = []
    asyncio.get_running_loop().call_later(0.02, seen.append, 1)
    assert await eventually(lambda: seen, interval_s=0.005) == [1]


async def test_in_a_coroutine_the_check_may_be_a_coroutine_function():
    looks = iter([False, False, 7])

    async def check() -> int | bool:
        return next(looks)

    assert await eventually(check, interval_s=0.001) == 7


async def test_in_a_coroutine_it_fails_at_the_deadline():
    with pytest.raises(NotYet, match=r"not within 0\.05 s"):
        await eventually(lambda: None, timeout_s=0.05, interval_s=0.01)
