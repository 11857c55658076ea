"""A long backlog to a hung receiver never hides another receiver's delivery.

The sender in process, a real SQLite file, real receivers. 400 callbacks
are owed to a receiver that never answers: it holds its share (4 attempts)
and the rest wait in the outbox, due, ahead of a healthy receiver's
callback. A pass reads a bounded head of the outbox; before, the head
stayed full of the hung receiver's deliveries (skipped, never left out),
so the healthy callback waited for the hung attempts' timeout.
"""

from __future__ import annotations

import asyncio

import pytest

from escalated.core.metrics import Metrics
from escalated.core.service import Service
from escalated.core.settings import Settings
from escalated.domain.models import Principal
from escalated.domain.policies import build_policy
from escalated.domain.scopes import ALL_SCOPES
from escalated.engine.sender import HEAD_ROWS, SCAN_PAST_BUSY, Sender
from escalated.store.sqlite import SqliteStore
from tests.support.api import escalation_body
from tests.support.receiver import Receiver

BACKLOG = HEAD_ROWS + SCAN_PAST_BUSY + 80  # more than one pass reads


@pytest.fixture
async def service(tmp_path):
    store = await SqliteStore.open(tmp_path / "hol.db")
    ws = await store.workspace_by_name(name="default")
    await store.put_policy(policy=build_policy(ws.id, "refunds.large"))
    svc = Service(store, Settings(db_path=tmp_path / "hol.db", delivery_timeout_s=60.0))
    svc.test_principal = Principal(kind="key", id="key_test", name="test", workspace_id=ws.id, scopes=frozenset(ALL_SCOPES))
    yield svc
    await store.close()


async def decide(service: Service, url: str) -> str:
    created = await service.create(service.test_principal, escalation_body(resume={"mode": "webhook", "url": url}))
    esc = await service.get(service.test_principal, created.escalation.id)
    await service.decide(service.test_principal, esc, {"choice": "approve"})
    return esc.id


async def test_a_healthy_callback_behind_a_long_backlog_to_a_hung_receiver_goes_at_once(service):
    hung = await Receiver(hold=asyncio.Event()).start()
    healthy = await Receiver().start()
    stop = asyncio.Event()
    try:
        for start in range(0, BACKLOG, 50):  # all owed before the sender starts: all due ahead of the healthy one
            await asyncio.gather(*(decide(service, hung.url) for _ in range(start, min(BACKLOG, start + 50))))
        await decide(service, healthy.url)
        async with Sender(service, metrics=Metrics()) as sender:
            service.on_deliveries(sender.wake)
            running = asyncio.create_task(sender.run(stop))
            await hung.wait_for(4)
            await healthy.wait_for(1, timeout_s=10)  # before: after the hung attempts' 60 s timeout
            assert len(hung.received) == 4  # the hung receiver's share, nothing more
            stop.set()
            sender.wake()
            await running
    finally:
        await healthy.stop()
        await hung.stop()
