"""The outbox sender in process, against a real SQLite file and a real HTTP
receiver that holds its answers: it waits for work instead of polling, and a
finishing attempt frees a slot for what is due behind it."""

from __future__ import annotations

import asyncio

import pytest

from escalated.domain.models import Principal
from escalated.domain.policies import build_policy
from escalated.domain.scopes import ALL_SCOPES
from escalated.engine.sender import Sender
from escalated.core.metrics import Metrics
from escalated.core.service import Service
from escalated.core.settings import Settings
from escalated.store.sqlite import SqliteStore
from tests.support.api import escalation_body
from tests.support.receiver import Receiver
from tests.support.wait import eventually
from escalated.timeutil import now_ms


@pytest.fixture
async def holding_receiver():
    rcv = await Receiver(hold=asyncio.Event()).start()
    yield rcv
    await rcv.stop()


@pytest.fixture
async def service(tmp_path):
    store = await SqliteStore.open(tmp_path / "sender.db")
    ws = await store.workspace_by_name(name="default")
    await store.put_policy(policy=build_policy(ws.id, "refunds.large"))
    svc = Service(store, Settings(db_path=tmp_path / "sender.db", sender_concurrency=1))
    svc.test_principal = Principal(kind="key", id="key_test", name="test", workspace_id=ws.id, scopes=frozenset(ALL_SCOPES))
    yield svc
    await store.close()


async def _decided(service: Service, holding_receiver: Receiver, count: int) -> list[str]:
    ids = []
    for _ in range(count):
        body = escalation_body(resume={"mode": "webhook", "url": holding_receiver.url, "secret": "s"})
        created = await service.create(service.test_principal, body)
        esc = await service.get(service.test_principal, created.escalation.id)
        await service.decide(service.test_principal, esc, {"choice": "approve"})
        ids.append(esc.id)
    return ids


class CountingHead:
    """Counts the sender's outbox reads (and performs them: nothing is faked)."""

    def __init__(self, monkeypatch, store) -> None:
        self.calls = 0
        self._real = store.pending_deliveries
        monkeypatch.setattr(store, "pending_deliveries", self)

    async def __call__(self, *args, **kwargs):
        self.calls += 1
        return await self._real(*args, **kwargs)


async def _statuses(service: Service, ids: list[str]) -> list[str]:
    return [d.status for eid in ids for d in await service.store.deliveries_of(escalation_id=eid)]


async def test_an_attempt_in_flight_does_not_make_the_sender_poll(service, holding_receiver, monkeypatch):
    ids = await _decided(service, holding_receiver, 1)
    head = CountingHead(monkeypatch, service.store)
    stop = asyncio.Event()
    async with Sender(service, metrics=Metrics()) as sender:
        task = asyncio.create_task(sender.run(stop))
        try:
            await eventually(lambda: len(holding_receiver.received) == 1, what="the first attempt")
            reads_while_waiting = head.calls
            await asyncio.sleep(0.3)  # the attempt is in flight the whole time
            assert head.calls == reads_while_waiting
            holding_receiver.hold.set()
            await eventually(lambda: _all_delivered(service, ids), what="every callback delivered")
        finally:
            stop.set()
            sender.wake()
            await asyncio.wait_for(task, 5)


async def _all_delivered(service: Service, ids: list[str]) -> bool:
    return set(await _statuses(service, ids)) == {"delivered"}


async def test_what_is_due_behind_full_slots_starts_when_an_attempt_finishes(service, holding_receiver, monkeypatch):
    # sender_concurrency=1: at most 4 attempts queued in flight, so 6 due
    # callbacks leave 2 behind. They must not wait for the 30 s idle wake.
    ids = await _decided(service, holding_receiver, 6)
    stop = asyncio.Event()
    async with Sender(service, metrics=Metrics()) as sender:
        task = asyncio.create_task(sender.run(stop))
        try:
            await eventually(lambda: len(holding_receiver.received) == 1, what="the first attempt")
            await asyncio.sleep(0.2)
            assert sorted(await _statuses(service, ids)) == ["pending"] * 6
            holding_receiver.hold.set()
            await eventually(lambda: _all_delivered(service, ids), what="every callback delivered")
            assert len(holding_receiver.received) == 6
        finally:
            stop.set()
            sender.wake()
            await asyncio.wait_for(task, 5)


class MovedClock:
    """Epoch ms that pass only when the test moves them."""

    def __init__(self, at_ms: int) -> None:
        self.at_ms = at_ms

    def __call__(self) -> int:
        return self.at_ms


async def test_a_failed_attempt_is_tried_again_when_its_backoff_has_passed_on_the_senders_clock(tmp_path, receiver):
    """An hour's backoff, passed by moving the clock the sender is given: no test waits it out."""
    store = await SqliteStore.open(tmp_path / "backoff.db")
    try:
        ws = await store.workspace_by_name(name="default")
        await store.put_policy(policy=build_policy(ws.id, "refunds.large"))
        settings = Settings(db_path=tmp_path / "backoff.db", retry_schedule_s=(3600.0,), retry_for_s=7200.0)
        service = Service(store, settings)
        service.test_principal = Principal(kind="key", id="key_test", name="test", workspace_id=ws.id, scopes=frozenset(ALL_SCOPES))
        [esc_id] = await _decided(service, receiver, 1)
        receiver.script.append(500)  # the first attempt fails
        clock = MovedClock(now_ms() + 1_000)  # ahead of the decision, as time goes on
        async with Sender(service, metrics=Metrics(), now=clock) as sender:
            assert await sender.drain() == 1
            [delivery] = await store.deliveries_of(escalation_id=esc_id)
            assert delivery.status == "pending" and len(delivery.attempts) == 1
            assert delivery.attempts[0].at_ms == clock.at_ms  # the attempt is stamped by the sender's clock
            clock.at_ms += 3_600_000 * 8 // 10 - 1  # within the backoff (an hour, less its 20% jitter): not due
            assert await sender.drain() == 0
            clock.at_ms = delivery.next_attempt_ms
            assert await sender.drain() == 1
        assert [d.status for d in await store.deliveries_of(escalation_id=esc_id)] == ["delivered"]
        assert len(receiver.received) == 2
    finally:
        await store.close()
