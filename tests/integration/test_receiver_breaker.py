"""A receiver that keeps failing is paused, probed, and resumed by itself.

The sender in process (paused after 5 failures in a row, for 0.4 s; in
``serve`` 10 failures over at least 30 s, for 30 s), a real SQLite
file and real HTTP receivers. Before (#24) a failing receiver was tried on
every delivery's own schedule however long it had been failing.
"""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest

from escalated.core.metrics import Metrics
from escalated.core.service import Service
from escalated.core.settings import Settings
from escalated.domain.models import Principal
from escalated.domain.policies import build_policy
from escalated.domain.scopes import ALL_SCOPES
from escalated.engine.breaker import Breakers
from escalated.engine.sender import Sender
from escalated.store.sqlite import SqliteStore
from tests.support.api import escalation_body
from tests.support.receiver import Receiver
from tests.support.wait import eventually

PAUSE_S = 0.4
RETRY_S = 0.05
FAILURES_TO_OPEN = 5  # 10 over at least 30 s in serve


def breakers() -> Breakers:
    return Breakers(failures_to_open=FAILURES_TO_OPEN, failing_for_ms=0, first_pause_ms=int(PAUSE_S * 1000))


@pytest.fixture
async def service(tmp_path):
    store = await SqliteStore.open(tmp_path / "breaker.db")
    ws = await store.workspace_by_name(name="default")
    await store.put_policy(policy=build_policy(ws.id, "refunds.large"))
    settings = Settings(db_path=tmp_path / "breaker.db", retry_schedule_s=(RETRY_S,))
    svc = Service(store, settings)
    svc.test_principal = Principal(kind="key", id="key_test", name="test", workspace_id=ws.id, scopes=frozenset(ALL_SCOPES))
    yield svc
    await store.close()


async def decided(service: Service, receiver: Receiver) -> str:
    body = escalation_body(resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
    created = await service.create(service.test_principal, body)
    esc = await service.get(service.test_principal, created.escalation.id)
    await service.decide(service.test_principal, esc, {"choice": "approve"})
    return esc.id


async def delivered(service: Service, escalation_id: str, *, timeout_s: float = 15.0):
    async def done():
        (callback,) = await service.store.deliveries_of(escalation_id=escalation_id)
        return callback if callback.status == "delivered" else None

    return await eventually(done, timeout_s=timeout_s, interval_s=0.02, what=f"{escalation_id}'s callback delivered")


async def logged(caplog, words: str, *, timeout_s: float = 15.0) -> None:
    await eventually(
        lambda: any(words in r.getMessage() for r in caplog.records), timeout_s=timeout_s, interval_s=0.02, what=f"a log of {words!r}"
    )


async def test_a_failing_receiver_is_paused_then_probed_and_resumed_by_itself(service, caplog):
    # FAILURES_TO_OPEN failures pause it; the first probe fails too (the pause
    # doubles), the second succeeds.
    failing = await Receiver(script=[500] * (FAILURES_TO_OPEN + 1)).start()
    healthy = await Receiver().start()
    stop = asyncio.Event()
    caplog.set_level(logging.WARNING, logger="escalated.engine.sender")
    try:
        async with Sender(service, metrics=Metrics(), breakers=breakers()) as sender:
            service.on_deliveries(sender.wake)  # as serve wires it (http/lifecycle.py)
            running = asyncio.create_task(sender.run(stop))
            first = await decided(service, failing)
            await logged(caplog, "circuit breaker")
            waiting = await decided(service, failing)  # owed while the receiver is paused
            other = await decided(service, healthy)  # another receiver is not held back
            await delivered(service, other, timeout_s=PAUSE_S)
            callbacks = [await delivered(service, first), await delivered(service, waiting)]
            stop.set()
            sender.wake()  # the loop looks at stop when it wakes
            await running
    finally:
        await failing.stop()
        await healthy.stop()
    attempts = sorted((a for c in callbacks for a in c.attempts), key=lambda a: a.at_ms)
    assert [a.status_code for a in attempts] == [500] * (FAILURES_TO_OPEN + 1) + [200, 200]
    assert len(failing.received) == len(attempts)  # none during a pause
    gaps_s = [(b.at_ms - a.at_ms) / 1000 for a, b in itertools.pairwise(attempts)]
    # Before the pause the delivery's own schedule (50 ms); then the pause, then twice it.
    assert all(gap < PAUSE_S for gap in gaps_s[: FAILURES_TO_OPEN - 1]), gaps_s
    assert gaps_s[FAILURES_TO_OPEN - 1] >= PAUSE_S, gaps_s
    assert gaps_s[FAILURES_TO_OPEN] >= 2 * PAUSE_S, gaps_s
    assert any("answers again; resumed" in r.getMessage() for r in caplog.records)
