"""Store conformance: escalations. Create and its idempotent replay, reads
with routing and filters, and the compare-and-set transitions (each once;
the loser gets ``InvalidState`` naming the current status). Every test runs
on SQLite and on PostgreSQL."""

from __future__ import annotations

import attrs
import msgspec
import pytest

from escalated.domain.models import (
    ACKNOWLEDGED,
    CANCELLED,
    OPEN,
    RESOLVED,
    Cancellation,
    Level,
    NumberField,
    Resume,
    ReviewRules,
    SelectField,
    SelectOption,
)
from escalated.domain.records import IdempotencyRecord, ListQuery
from escalated.errors import InvalidState
from tests.store import make
from tests.store.make import WINDOW_MS, create, escalation, human


def record(ws: str, key: str = "key-1", *, answer: bytes = b'{"n": 1}') -> IdempotencyRecord:
    return IdempotencyRecord(ws, key, "sha-1", 201, answer)


async def ids(store, **query) -> list[str]:
    page, _ = await store.list_escalations(query=ListQuery(**{"routes": None, **query}))
    return [e.id for e in page]


# -- create and replay ---------------------------------------------------------


async def test_a_created_escalation_reads_back_whole_with_its_created_history(store, ws):
    esc = escalation(ws)
    assert await create(store, esc) is None
    got = await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)
    assert got is not None and got.status == OPEN and got.content == esc.content
    assert (got.deadline_ms, got.default_choice, got.run_id) == (esc.deadline_ms, "deny", "run")
    assert [(h.event, h.by, h.at_ms) for h in got.history] == [("created", "key_1", 1_000)]


async def test_every_field_of_a_created_escalation_reads_back_equal(store, ws):
    content = msgspec.structs.replace(
        make.CONTENT,
        response_fields=(
            NumberField(name="amount", label="Amount", min=0.5, step=0.25),
            SelectField(name="reason", label="Why", options=(SelectOption(value="fraud", label="Fraud"),)),
        ),
    )
    review = ReviewRules(
        remind_every_s=90.5, levels=(Level(after_s=600.0, reviewers=("group:leads",), notify=("email:x@example.com",)),),
        quorum=2, quorum_choices=("approve",),
    )  # fmt: skip
    esc = msgspec.structs.replace(
        escalation(ws), content=content, resume=Resume(url="http://127.0.0.1:9/resume", secret="whsec_x"),
        review=review, remind_ms=91_500, nudge_ms=91_500,
    )  # fmt: skip
    await create(store, esc)
    got = await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)
    assert got == msgspec.structs.replace(esc, history=got.history)


async def test_a_second_create_with_the_same_idempotency_key_inserts_nothing_and_replays_the_first(store, ws):
    first, second = escalation(ws), escalation(ws, at_ms=2_000)
    assert await create(store, first, idempotency=record(ws, answer=b"first")) is None
    replay = await create(store, second, idempotency=record(ws, answer=b"second"))
    assert replay is not None and (replay.status, replay.response_json, replay.body_sha256) == (201, b"first", "sha-1")
    assert await ids(store, workspace_id=ws) == [first.id]


async def test_an_idempotency_key_used_before_the_window_creates_anew(store, ws):
    first = escalation(ws)
    later = escalation(ws, at_ms=first.created_ms + WINDOW_MS + 1)
    await create(store, first, idempotency=record(ws, answer=b"first"))
    assert await create(store, later, idempotency=record(ws, answer=b"later")) is None
    replay = await store.find_replay(workspace_id=ws, key="key-1", not_before_ms=later.created_ms - WINDOW_MS)
    assert sorted(await ids(store, workspace_id=ws)) == sorted([first.id, later.id])
    assert replay is not None and replay.response_json == b"later"


async def test_find_replay_sees_a_key_only_in_its_own_workspace(store, ws):
    other = (await store.create_workspace(name="other")).id
    await create(store, escalation(ws), idempotency=record(ws))
    assert await store.find_replay(workspace_id=ws, key="key-1", not_before_ms=0) is not None
    assert await store.find_replay(workspace_id=other, key="key-1", not_before_ms=0) is None


# -- reads: routing, workspaces, filters, pages -----------------------------------


async def test_get_sees_an_escalation_only_through_one_of_its_routes(store, ws):
    esc = escalation(ws)
    await create(store, esc, routes=("group:ops", "user:ann"))
    seen = [
        await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=routes) is not None
        for routes in (("group:ops",), ("user:ann", "group:x"), ("user:bob",), ())
    ]
    assert seen == [True, True, False, False]


async def test_the_star_route_is_a_route_like_the_others(store, ws):
    # '*' is every user of the workspace because a user's routes include it
    # (Principal.routes); the store matches it as a plain route.
    esc = escalation(ws)
    await create(store, esc, routes=("*",))
    assert await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=("*", "user:ann")) is not None
    assert await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=("user:ann",)) is None


async def test_get_in_another_workspace_is_none_and_across_workspaces_is_found(store, ws):
    other = (await store.create_workspace(name="other")).id
    esc = escalation(ws)
    await create(store, esc)
    assert await store.get_escalation(escalation_id=esc.id, workspace_id=other, routes=None) is None
    assert await store.get_escalation(escalation_id=esc.id, workspace_id=None, routes=None) is not None


async def test_get_escalations_reads_a_batch_across_workspaces(store, ws):
    other = (await store.create_workspace(name="other")).id
    mine, theirs = escalation(ws), escalation(other)
    await create(store, mine)
    await create(store, theirs)
    got = await store.get_escalations(escalation_ids=[mine.id, theirs.id, "esc_missing"])
    assert sorted(e.id for e in got) == sorted([mine.id, theirs.id])


async def test_list_filters_by_status_run_policy_and_agent(store, ws):
    a, b = escalation(ws, run_id="r-a"), escalation(ws, run_id="r-b")
    await create(store, a)
    await create(store, b)
    await store.acknowledge(escalation_id=b.id, by="user:ann", at_ms=1_500)
    assert await ids(store, workspace_id=ws, status=ACKNOWLEDGED) == [b.id]
    assert await ids(store, workspace_id=ws, run_id="r-a") == [a.id]
    assert await ids(store, workspace_id=ws, policy="other.policy") == []
    assert await ids(store, workspace_id=ws, agent_id="agent", ascending=True) == sorted([a.id, b.id])


async def test_list_shows_only_what_the_routes_see(store, ws):
    ops, everyone = escalation(ws), escalation(ws)
    await create(store, ops, routes=("group:ops",))
    await create(store, everyone, routes=("*",))
    assert await ids(store, workspace_id=ws, routes=("*", "user:bob")) == [everyone.id]
    assert sorted(await ids(store, workspace_id=ws, routes=("*", "group:ops"))) == sorted([ops.id, everyone.id])


async def test_list_pages_in_id_order_newest_first_with_a_cursor_until_the_end(store, ws):
    made = [escalation(ws, at_ms=1_000 + i) for i in range(5)]
    for esc in made:
        await create(store, esc)
    newest_first = sorted((e.id for e in made), reverse=True)
    seen, cursor, pages = [], None, 0
    while True:
        page, cursor = await store.list_escalations(query=ListQuery(workspace_id=ws, routes=None, limit=2, cursor=cursor))
        seen += [e.id for e in page]
        pages += 1
        if cursor is None:
            break
    assert seen == newest_first and pages == 3


async def test_count_by_status_counts_what_the_routes_see(store, ws):
    a, b, c = escalation(ws), escalation(ws), escalation(ws)
    for esc, routes in ((a, ("*",)), (b, ("group:ops",)), (c, ("group:ops",))):
        await create(store, esc, routes=routes)
    await store.resolve(escalation_id=c.id, resolution=human(), history_event="decided", callback=None)
    assert await store.count_by_status(workspace_id=ws, routes=("*", "group:ops")) == {OPEN: 2, RESOLVED: 1}
    assert await store.count_by_status(workspace_id=ws, routes=("*", "user:bob")) == {OPEN: 1}


async def test_deadlines_between_lists_live_deadlines_in_the_interval_oldest_first(store, ws):
    early, late, ended = (escalation(ws, at_ms=t) for t in (1_000, 5_000, 2_000))
    for esc in (early, late, ended):
        await create(store, esc)
    await store.cancel(escalation_id=ended.id, cancellation=Cancellation(cancelled_by="key_1", cancelled_at_ms=3_000), callback=None)
    assert await store.deadlines_between(after_ms=None, until_ms=70_000, limit=10) == [(61_000, early.id), (65_000, late.id)]
    assert await store.deadlines_between(after_ms=61_000, until_ms=70_000, limit=10) == [(65_000, late.id)]
    assert await store.deadlines_between(after_ms=None, until_ms=70_000, limit=1) == [(61_000, early.id)]


# -- transitions, each once --------------------------------------------------------


async def test_acknowledge_once_then_false(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    assert await store.acknowledge(escalation_id=esc.id, by="user:ann", at_ms=1_500) is True
    assert await store.acknowledge(escalation_id=esc.id, by="user:bob", at_ms=1_600) is False
    got = await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)
    assert (got.status, got.acknowledged_by, got.acknowledged_ms) == (ACKNOWLEDGED, "user:ann", 1_500)
    assert [h.event for h in got.history] == ["created", "acknowledged"]


async def test_acknowledging_an_ended_escalation_is_refused_naming_the_status(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=None)
    with pytest.raises(InvalidState) as refused:
        await store.acknowledge(escalation_id=esc.id, by="user:ann", at_ms=3_000)
    assert refused.value.extra["current_status"] == RESOLVED
    got = await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)
    assert got.status == RESOLVED and got.acknowledged_by is None


async def test_resolve_records_the_resolution_history_and_callback_together(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    cb = make.delivery(esc, "escalation.decided")
    resolution = attrs.evolve(human(), reason="looks fine", response={"amount": 12.5, "reason": "fraud"})
    await store.resolve(escalation_id=esc.id, resolution=resolution, history_event="decided", callback=cb)
    got = await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)
    assert got.status == RESOLVED and got.resolution == resolution
    assert [h.event for h in got.history] == ["created", "decided"]
    assert [(d.id, d.body) for d in await store.deliveries_of(escalation_id=esc.id)] == [(cb.id, cb.body)]


async def test_an_acknowledged_escalation_can_be_resolved(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    await store.acknowledge(escalation_id=esc.id, by="user:ann", at_ms=1_500)
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=None)
    assert (await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)).status == RESOLVED


async def test_a_second_resolve_is_refused_naming_the_status_and_writes_nothing(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=None)
    with pytest.raises(InvalidState) as refused:
        await store.resolve(
            escalation_id=esc.id, resolution=human("deny", by="user:bob"), history_event="decided",
            callback=make.delivery(esc, "escalation.decided"),
        )  # fmt: skip
    got = await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)
    assert refused.value.extra["current_status"] == RESOLVED
    assert got.resolution.answered_by == "user:ann" and await store.deliveries_of(escalation_id=esc.id) == []


async def test_resolving_a_cancelled_escalation_is_refused(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    await store.cancel(escalation_id=esc.id, cancellation=Cancellation(cancelled_by="key_1", cancelled_at_ms=1_500), callback=None)
    with pytest.raises(InvalidState) as refused:
        await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=None)
    assert refused.value.extra["current_status"] == CANCELLED


async def test_cancel_records_the_cancellation_and_its_callback(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    cancellation = Cancellation(cancelled_by="key_1", cancelled_at_ms=1_500, reason="not needed")
    cb = make.delivery(esc, "escalation.cancelled")
    await store.cancel(escalation_id=esc.id, cancellation=cancellation, callback=cb)
    got = await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=None)
    assert (got.status, got.cancellation) == (CANCELLED, cancellation)
    assert [h.event for h in got.history] == ["created", "cancelled"]
    assert [d.id for d in await store.deliveries_of(escalation_id=esc.id)] == [cb.id]


async def test_a_second_cancel_is_refused(store, ws):
    esc = escalation(ws)
    await create(store, esc)
    cancellation = Cancellation(cancelled_by="key_1", cancelled_at_ms=1_500)
    await store.cancel(escalation_id=esc.id, cancellation=cancellation, callback=None)
    with pytest.raises(InvalidState) as refused:
        await store.cancel(escalation_id=esc.id, cancellation=cancellation, callback=None)
    assert refused.value.extra["current_status"] == CANCELLED


async def test_resolve_many_breaches_the_live_ones_once_and_skips_the_ended(store, ws):
    live, decided = escalation(ws), escalation(ws)
    await create(store, live)
    await create(store, decided)
    await store.resolve(escalation_id=decided.id, resolution=human(), history_event="decided", callback=None)
    items = [(e.id, make.timeout(), "breached", make.delivery(e, "escalation.breached")) for e in (live, decided)]
    assert await store.resolve_many(items=items) == [live.id]
    assert await store.resolve_many(items=items) == []
    got = await store.get_escalation(escalation_id=live.id, workspace_id=ws, routes=None)
    assert got.resolution == make.timeout() and [h.event for h in got.history] == ["created", "breached"]
    assert await store.deliveries_of(escalation_id=decided.id) == []
    assert len(await store.deliveries_of(escalation_id=live.id)) == 1
