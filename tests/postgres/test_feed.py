"""The change feed (store/postgres/feed.py) on a real PostgreSQL database."""

from __future__ import annotations

import asyncio

import pytest

from escalated.store.postgres.feed import ChangeFeed
from escalated.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres


async def test_a_cancelled_feed_leaves_no_waiter_behind(postgres_url):
    """Found running the integration suite on PostgreSQL: every server stop
    left an ``Event.wait`` task pending, destroyed when the loop closed."""
    store = await PostgresStore.open(postgres_url)
    try:
        feed = await ChangeFeed(store, on_change=lambda change: None).start()
        before = asyncio.all_tasks()
        task = asyncio.create_task(feed.run(asyncio.Event()))
        await asyncio.sleep(0)  # let it reach its wait
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert asyncio.all_tasks() - before - {task} == set()
    finally:
        await store.close()
