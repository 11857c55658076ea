"""The change feed (store/postgres/feed.py) on a real PostgreSQL database."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from escalated.store.postgres.feed import ChangeFeed
from escalated.store.postgres.store import PostgresStore
from escalated.store.postgres.writer import DOORBELL_CHANNEL
from tests.support.wait import eventually

pytestmark = pytest.mark.postgres


async def test_a_cancelled_feed_leaves_no_waiter_behind(postgres_url):
    """Found running the integration suite on PostgreSQL: every server stop
    left an ``Event.wait`` task pending, destroyed when the loop closed."""
    store = await PostgresStore.open(postgres_url)
    try:
        feed = await ChangeFeed(store.connector, on_change=lambda change: None).start()
        before = asyncio.all_tasks()
        task = asyncio.create_task(feed.run(asyncio.Event()))
        await asyncio.sleep(0)  # let it reach its wait
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert asyncio.all_tasks() - before - {task} == set()
    finally:
        await store.close()


async def _sessions(url: str, condition: str) -> int:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        sql = f"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND {condition}"
        return (await (await conn.execute(sql)).fetchone())[0]


async def _until(url: str, condition: str) -> None:
    await eventually(lambda: _sessions(url, condition), timeout_s=10, what=f"a session where {condition}")


async def test_a_cancelled_follow_returns_only_once_its_feed_has_finished_cancelling_a_query(postgres_url):
    """Found as "query cancellation interrupted (GeneratorExit)" at the end of
    test runs: follow() returned while its feed was still cancelling a query,
    and the in-process server's loop closed under it."""
    store = await PostgresStore.open(postgres_url)
    blocker = await psycopg.AsyncConnection.connect(postgres_url)
    try:
        follow = asyncio.create_task(store.follow(asyncio.Event(), lambda change: None))
        await _until(postgres_url, "query LIKE 'LISTEN %%'")
        # The feed's next read waits on this lock: a query in flight when follow is cancelled.
        await blocker.execute("LOCK TABLE escalation_events IN ACCESS EXCLUSIVE MODE")
        async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as ringer:
            await ringer.execute(f"NOTIFY {DOORBELL_CHANNEL}")
        await _until(postgres_url, "wait_event_type = 'Lock'")
        follow.cancel()
        await asyncio.gather(follow, return_exceptions=True)
        left = [t for t in asyncio.all_tasks() if "ChangeFeed.run" in repr(t.get_coro())]
        assert left == []
    finally:
        await blocker.rollback()
        await blocker.close()
        await store.close()
