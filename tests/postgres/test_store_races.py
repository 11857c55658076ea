"""Two replicas on one database: the races the contract must survive.

Each ``PostgresStore`` here is what one ``escalated serve`` replica opens:
its own writer connection, its own read pool, the same database.
"""

from __future__ import annotations

import asyncio

import pytest

from escalated.domain.models import (
    CALLBACK,
    OPEN,
    Cancellation,
    Choice,
    Content,
    Delivery,
    Escalation,
    Resolution,
    Subject,
)
from escalated.domain.records import IdempotencyRecord, ListQuery
from escalated.errors import InvalidState
from escalated.domain.ids import new_id
from escalated.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres
WINDOW_MS = 24 * 3600 * 1000


@pytest.fixture
async def replicas(postgres_url):
    a, b = await PostgresStore.open(postgres_url), await PostgresStore.open(postgres_url)
    yield a, b
    await a.close()
    await b.close()


async def workspace_id(store: PostgresStore) -> str:
    return (await store.workspace_by_name(name="default")).id


def escalation(ws: str, *, at_ms: int = 1_000) -> Escalation:
    content = Content(
        subject=Subject(type="refund", id="r1", label="Refund"),
        question="Approve?",
        evidence=(),
        choices=(Choice(id="approve", label="Approve"), Choice(id="deny", label="Deny")),
    )
    return Escalation(
        id=new_id("esc"), workspace_id=ws, status=OPEN, policy="refunds.large", agent_id="agent", run_id="run",
        content=content, created_ms=at_ms, created_by="key_1", deadline_ms=at_ms + 60_000, default_choice="deny",
    )  # fmt: skip


async def create(store: PostgresStore, esc: Escalation, idempotency: IdempotencyRecord | None = None):
    return await store.create_escalation(
        escalation=esc, routes=("*",), notifications=[], idempotency=idempotency,
        not_before_ms=esc.created_ms - WINDOW_MS, content_json=None,
    )  # fmt: skip


def callback(esc: Escalation, event: str) -> Delivery:
    return Delivery(
        id=new_id("dlv"), escalation_id=esc.id, kind=CALLBACK, target="http://127.0.0.1:9/cb", event=event,
        body=b"{}", next_attempt_ms=0, created_ms=0,
    )  # fmt: skip


async def test_an_escalation_created_on_one_replica_is_read_and_listed_on_the_other(replicas):
    a, b = replicas
    ws = await workspace_id(a)
    esc = escalation(ws)
    assert await create(a, esc) is None
    got = await b.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=("user:ann", "*"))
    page, cursor = await b.list_escalations(query=ListQuery(workspace_id=ws, routes=None))
    assert got is not None and got.content == esc.content and [h.event for h in got.history] == ["created"]
    assert [e.id for e in page] == [esc.id] and cursor is None


async def test_decide_on_one_replica_against_breach_on_the_other_resolves_each_once(replicas):
    a, b = replicas
    ws = await workspace_id(a)
    escs = [escalation(ws) for _ in range(30)]
    for esc in escs:
        await create(a, esc)

    async def decide(esc: Escalation) -> bool:
        human = Resolution(choice="approve", resolved_by="human", answered_by="user:ann", answered_at_ms=2_000)
        try:
            await a.resolve(escalation_id=esc.id, resolution=human, history_event="decided", callback=callback(esc, "escalation.decided"))
        except InvalidState:
            return False
        return True

    timeout = Resolution(choice="deny", resolved_by="timeout", answered_by="system:sla", answered_at_ms=2_000)
    items = [(esc.id, timeout, "breached", callback(esc, "escalation.breached")) for esc in escs]
    decided, breached = await asyncio.gather(
        asyncio.gather(*(decide(esc) for esc in escs)), b.resolve_many(items=items)
    )
    for esc, won_by_decide in zip(escs, decided, strict=True):
        final = await a.get_escalation(escalation_id=esc.id, workspace_id=None, routes=None)
        deliveries = await b.deliveries_of(escalation_id=esc.id)
        ended = [h.event for h in final.history if h.event in ("decided", "breached")]
        assert won_by_decide != (esc.id in breached)  # exactly one of the two won
        assert ended == (["decided"] if won_by_decide else ["breached"])
        assert [d.event for d in deliveries] == [f"escalation.{ended[0]}"]


async def test_concurrent_creates_with_one_key_on_two_replicas_make_one_escalation(replicas):
    a, b = replicas
    ws = await workspace_id(a)
    first, second = escalation(ws), escalation(ws)

    def record(esc: Escalation) -> IdempotencyRecord:
        return IdempotencyRecord(ws, "key-1", "sha", 201, b'{"id": "%s"}' % esc.id.encode())

    results = await asyncio.gather(create(a, first, record(first)), create(b, second, record(second)))
    page, _ = await a.list_escalations(query=ListQuery(workspace_id=ws, routes=None))
    replays = [r for r in results if r is not None]
    assert len(page) == 1 and len(replays) == 1
    assert replays[0].response_json == b'{"id": "%s"}' % page[0].id.encode()


async def test_cancel_after_a_decision_on_another_replica_is_refused_with_the_current_status(replicas):
    a, b = replicas
    esc = escalation(await workspace_id(a))
    await create(a, esc)
    human = Resolution(choice="approve", resolved_by="human", answered_by="user:ann", answered_at_ms=2_000)
    await a.resolve(escalation_id=esc.id, resolution=human, history_event="decided", callback=None)
    with pytest.raises(InvalidState) as refused:
        await b.cancel(escalation_id=esc.id, cancellation=Cancellation(cancelled_by="key_1", cancelled_at_ms=3_000), callback=None)
    assert refused.value.extra["current_status"] == "resolved"


async def test_two_senders_claiming_the_same_deliveries_take_each_once(replicas):
    a, b = replicas
    esc = escalation(await workspace_id(a))
    notices = [callback(esc, "escalation.created") for _ in range(20)]
    await a.create_escalation(
        escalation=esc, routes=("*",), notifications=notices, idempotency=None, not_before_ms=0, content_json=None
    )
    ids = [d.id for d in notices]
    won_a, won_b = await asyncio.gather(
        a.claim_deliveries(delivery_ids=ids, at_ms=5_000, lease_ms=60_000),
        b.claim_deliveries(delivery_ids=ids, at_ms=5_000, lease_ms=60_000),
    )
    assert set(won_a).isdisjoint(won_b) and set(won_a) | set(won_b) == set(ids)


async def test_a_lapsed_claim_is_claimed_again_and_its_stale_token_cannot_record(replicas):
    from escalated.domain.models import DELIVERED, PENDING, Attempt

    a, b = replicas
    esc = escalation(await workspace_id(a))
    notice = callback(esc, "escalation.created")
    await a.create_escalation(
        escalation=esc, routes=("*",), notifications=[notice], idempotency=None, not_before_ms=0, content_json=None
    )
    stale = await a.claim_deliveries(delivery_ids=[notice.id], at_ms=5_000, lease_ms=60_000)
    during = await b.claim_deliveries(delivery_ids=[notice.id], at_ms=64_999, lease_ms=60_000)
    fresh = await b.claim_deliveries(delivery_ids=[notice.id], at_ms=65_000, lease_ms=60_000)
    await a.record_attempt(
        delivery_id=notice.id, attempt=Attempt(at_ms=66_000, duration_ms=1, status_code=500), status=PENDING,
        next_attempt_ms=999_999, token=stale[notice.id],
    )  # fmt: skip
    await b.record_attempt(
        delivery_id=notice.id, attempt=Attempt(at_ms=66_000, duration_ms=1, status_code=200), status=DELIVERED,
        next_attempt_ms=None, token=fresh[notice.id],
    )  # fmt: skip
    (final,) = await a.deliveries_of(escalation_id=esc.id)
    assert during == {} and fresh[notice.id] > stale[notice.id]
    assert final.status == DELIVERED and [x.status_code for x in final.attempts] == [200]


async def test_the_feed_on_one_replica_hands_on_the_other_replicas_commits_in_order_within_1_s(replicas, postgres_url):
    from escalated.store.postgres.doorbell import Doorbell
    from escalated.store.postgres.feed import ChangeFeed

    a, b = replicas
    seen: list[tuple[int, str, str]] = []
    arrived = asyncio.Event()

    def on_change(change) -> None:
        seen.append((change.seq, change.event, change.escalation.status))
        if change.event == "decided":
            arrived.set()

    feed = await ChangeFeed(b.connector, on_change=on_change).start()
    stop = asyncio.Event()
    bell = Doorbell(postgres_url, on_ring=feed.ring)
    tasks = [asyncio.create_task(feed.run(stop)), asyncio.create_task(bell.run(stop))]
    await asyncio.wait_for(bell.listening.wait(), 5)
    esc = escalation(await workspace_id(a))
    await create(a, esc)
    human = Resolution(choice="approve", resolved_by="human", answered_by="user:ann", answered_at_ms=2_000)
    await a.resolve(escalation_id=esc.id, resolution=human, history_event="decided", callback=None)
    await asyncio.wait_for(arrived.wait(), 1.0)
    stop.set()
    await asyncio.gather(*tasks)
    assert [event for _, event, _ in seen] == ["created", "decided"]
    assert seen[0][0] < seen[1][0] and seen[-1][2] == "resolved"
