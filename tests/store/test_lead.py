"""Store conformance: ``lead`` runs the SLA clock while this process may
(one process: always; a shared store: the one holding the lead) and
returns once told to stop. Races between replicas for the lead are in
tests/postgres/test_leader.py. Runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio


async def test_a_lone_process_leads_and_stops_when_told(store):
    stop, running = asyncio.Event(), asyncio.Event()

    async def clock() -> None:
        running.set()
        await stop.wait()

    leading = asyncio.create_task(store.lead(stop, clock))
    await asyncio.wait_for(running.wait(), 30)
    stop.set()
    await asyncio.wait_for(leading, 30)
    assert leading.done() and leading.exception() is None
