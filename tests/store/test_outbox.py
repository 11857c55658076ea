"""Store conformance: the outbox. Deliveries are written with the change
that owes them, read in due order, attempted under a claim, retried, and a
callback is queued again by hand. Every test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from escalated.domain.models import DELIVERED, FAILED, NOTIFICATION, PENDING, Attempt
from escalated.errors import InvalidState
from tests.store import make
from tests.store.make import create, escalation, human


async def attempted(store, delivery, attempt: Attempt, *, status: str, next_attempt_ms: int | None = None) -> None:
    """As the sender does: claim the due delivery, attempt it, record the
    attempt under the claim's token (a shared store records nothing without one)."""
    claim = await store.claim_deliveries(delivery_ids=[delivery.id], at_ms=attempt.at_ms, lease_ms=60_000)
    await store.record_attempt(delivery_id=delivery.id, attempt=attempt, status=status, next_attempt_ms=next_attempt_ms, token=claim[delivery.id])


async def with_notices(store, ws, *dues: int):
    esc = escalation(ws)
    notices = [make.delivery(esc, "escalation.created", kind=NOTIFICATION, due_ms=due) for due in dues]
    await create(store, esc, notifications=notices)
    return esc, notices


async def test_notifications_are_written_with_the_create_and_pending_in_due_order(store, ws):
    _, (late, early) = await with_notices(store, ws, 5_000, 1_000)
    pending = await store.pending_deliveries(limit=10, exclude=set())
    assert [d.id for d in pending] == [early.id, late.id]
    assert all(d.status == PENDING and d.attempts == () for d in pending)
    assert pending[0].body == early.body


async def test_pending_deliveries_skip_the_excluded_and_stop_at_the_limit(store, ws):
    _, (a, b, c) = await with_notices(store, ws, 1_000, 2_000, 3_000)
    assert [d.id for d in await store.pending_deliveries(limit=10, exclude={b.id})] == [a.id, c.id]
    assert [d.id for d in await store.pending_deliveries(limit=1, exclude=set())] == [a.id]


async def test_deliveries_of_lists_the_callback_first_then_notifications_in_creation_order(store, ws):
    esc, notices = await with_notices(store, ws, 1_000, 1_000)
    cb = make.delivery(esc, "escalation.decided")
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=cb)
    assert [d.id for d in await store.deliveries_of(escalation_id=esc.id)] == [cb.id, *(n.id for n in notices)]


async def test_a_delivered_attempt_is_recorded_and_no_longer_pending(store, ws):
    esc, (notice,) = await with_notices(store, ws, 1_000)
    attempt = Attempt(at_ms=1_100, duration_ms=12, status_code=200)
    await attempted(store, notice, attempt, status=DELIVERED, next_attempt_ms=None)
    (got,) = await store.deliveries_of(escalation_id=esc.id)
    assert (got.status, got.attempts, got.next_attempt_ms) == (DELIVERED, (attempt,), None)
    assert await store.pending_deliveries(limit=10, exclude=set()) == []


async def test_a_failed_attempt_with_a_retry_stays_pending_due_at_the_retry(store, ws):
    _, (first, second) = await with_notices(store, ws, 1_000, 2_000)
    attempt = Attempt(at_ms=1_100, duration_ms=5, status_code=503)
    await attempted(store, first, attempt, status=PENDING, next_attempt_ms=9_000)
    pending = await store.pending_deliveries(limit=10, exclude=set())
    assert [(d.id, d.next_attempt_ms) for d in pending] == [(second.id, 2_000), (first.id, 9_000)]
    assert pending[1].attempts == (attempt,)


async def test_attempts_accumulate_until_the_delivery_fails_for_good(store, ws):
    esc, (notice,) = await with_notices(store, ws, 1_000)
    tries = [Attempt(at_ms=t, duration_ms=1, error="connection refused") for t in (1_000, 2_000)]
    await attempted(store, notice, tries[0], status=PENDING, next_attempt_ms=2_000)
    await attempted(store, notice, tries[1], status=FAILED, next_attempt_ms=None)
    (got,) = await store.deliveries_of(escalation_id=esc.id)
    assert (got.status, got.attempts) == (FAILED, tuple(tries))


async def test_defer_moves_pending_deliveries_later_without_an_attempt(store, ws):
    _, (a, b) = await with_notices(store, ws, 1_000, 2_000)
    await store.defer_deliveries(delivery_ids=[a.id], until_ms=7_000)
    pending = await store.pending_deliveries(limit=10, exclude=set())
    assert [(d.id, d.next_attempt_ms, d.attempts) for d in pending] == [(b.id, 2_000, ()), (a.id, 7_000, ())]


async def test_a_claim_hands_out_every_unclaimed_delivery(store, ws):
    _, notices = await with_notices(store, ws, 1_000, 2_000)
    claimed = await store.claim_deliveries(delivery_ids=[n.id for n in notices], at_ms=2_000, lease_ms=60_000)
    assert set(claimed) == {n.id for n in notices}
    assert all((token is None) == (not store.shared) for token in claimed.values())


async def test_a_claim_is_held_for_its_lease_only_where_processes_share_the_database(store, ws):
    # One SQLite process is the only sender: its claims never exclude. A
    # shared store's claim keeps the delivery from another sender until the
    # lease ends (tests/postgres/test_outbox_claims.py races two replicas).
    _, (notice,) = await with_notices(store, ws, 1_000)
    await store.claim_deliveries(delivery_ids=[notice.id], at_ms=1_000, lease_ms=60_000)
    during = await store.claim_deliveries(delivery_ids=[notice.id], at_ms=60_999, lease_ms=60_000)
    after = await store.claim_deliveries(delivery_ids=[notice.id], at_ms=61_000, lease_ms=60_000)
    assert (notice.id in during) == (not store.shared) and notice.id in after


async def test_requeue_callback_queues_the_same_callback_again(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    cb = make.delivery(esc, "escalation.decided")
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=cb)
    failed = Attempt(at_ms=3_000, duration_ms=1, status_code=500)
    await attempted(store, cb, failed, status=FAILED, next_attempt_ms=None)
    again = await store.requeue_callback(escalation_id=esc.id, at_ms=9_000)
    assert (again.id, again.body, again.status) == (cb.id, cb.body, PENDING)
    assert [(d.id, d.next_attempt_ms) for d in await store.pending_deliveries(limit=10, exclude=set())] == [(cb.id, 9_000)]


async def test_requeue_callback_without_a_callback_is_refused(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    with pytest.raises(InvalidState):
        await store.requeue_callback(escalation_id=esc.id, at_ms=9_000)
