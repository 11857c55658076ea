"""The doorbell: a commit group on one replica is heard by another within 1 s."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from escalated.store.postgres.doorbell import Doorbell
from escalated.store.postgres.writer import PgWriter

pytestmark = pytest.mark.postgres


async def touch(tx) -> None:
    await tx.execute("UPDATE workspaces SET created_ms = created_ms + 1")


async def listening_doorbell(url: str, stop: asyncio.Event) -> tuple[Doorbell, asyncio.Event, asyncio.Task]:
    rang = asyncio.Event()
    bell = Doorbell(url, on_ring=rang.set)
    task = asyncio.create_task(bell.run(stop))
    await asyncio.wait_for(bell.listening.wait(), 5)
    await asyncio.wait_for(rang.wait(), 1)  # the ring on connecting
    rang.clear()
    return bell, rang, task


async def test_a_commit_on_another_replicas_writer_rings_within_1_s(postgres_url):
    stop = asyncio.Event()
    _, rang, task = await listening_doorbell(postgres_url, stop)
    writer = await PgWriter(postgres_url).start()  # "replica B": its own connection
    await writer.submit(touch)
    await asyncio.wait_for(rang.wait(), 1.0)
    await writer.close()
    stop.set()
    await task


async def test_a_doorbell_whose_connection_drops_reconnects_and_rings_for_what_it_missed(postgres_url):
    stop = asyncio.Event()
    bell, rang, task = await listening_doorbell(postgres_url, stop)
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as admin:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%%'"
            " AND datname = current_database()"
        )
    await asyncio.wait_for(rang.wait(), 5.0)  # rung again once it listens again
    assert bell.listening.is_set()
    stop.set()
    await task
