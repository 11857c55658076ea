"""Store conformance: reviewer operations (CONTRACT §15). Claims and
assignments, remembered decisions and their uses, quorum votes, and the
reminders and levels the SLA clock writes (compare-and-set on nudge_ms).
Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import msgspec
import pytest

from escalated.domain.ids import new_id
from escalated.domain.models import ACKNOWLEDGED, NOTIFICATION, OPEN, RESOLVED, Approval, HistoryEntry, Resolution, RuleRef
from escalated.domain.review import Nudge
from escalated.domain.rules import Rule, RuleMatch
from escalated.errors import AlreadyApproved, InvalidState
from tests.store import make
from tests.store.make import create, escalation, human


async def created(store, ws, **fields):
    esc = escalation(ws, **fields)
    await create(store, esc)
    return esc


async def get(store, esc):
    return await store.get_escalation(escalation_id=esc.id, workspace_id=None, routes=None)


# -- claims and assignments ------------------------------------------------------


async def test_a_claim_assigns_and_acknowledges_an_open_escalation(store, ws):
    esc = await created(store, ws)
    args = dict(escalation_id=esc.id, assignee="ann", by="user:ann", event="claimed", acknowledge=True)
    assert await store.assign(**args, at_ms=1_500) is True
    assert await store.assign(**args, at_ms=1_600) is False
    got = await get(store, esc)
    assert (got.assignee, got.status, got.acknowledged_by) == ("ann", ACKNOWLEDGED, "user:ann")
    assert [h.event for h in got.history] == ["created", "acknowledged", "claimed", "claimed"]


async def test_an_assignment_sets_the_assignee_without_acknowledging(store, ws):
    esc = await created(store, ws)
    args = dict(escalation_id=esc.id, by="user:lead", event="assigned", acknowledge=False)
    assert await store.assign(**args, assignee="bob", at_ms=1_500) is False
    got = await get(store, esc)
    assert (got.assignee, got.status) == ("bob", OPEN)
    await store.assign(**args, assignee=None, at_ms=1_600)
    assert (await get(store, esc)).assignee is None


async def test_assigning_an_ended_escalation_is_refused(store, ws):
    esc = await created(store, ws)
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=None)
    with pytest.raises(InvalidState):
        await store.assign(escalation_id=esc.id, assignee="ann", by="user:ann", event="claimed", acknowledge=True, at_ms=3_000)


# -- remembered decisions -----------------------------------------------------------


def rule(ws: str, *, created_ms: int = 1_000, expires_ms: int = 100_000, policy: str = "refunds.large") -> Rule:
    return Rule(
        id=new_id("rul"), workspace_id=ws, policy=policy, choice="approve", match=RuleMatch(agent_id="agent"),
        reason="small refunds", created_by="user:ann", created_ms=created_ms, expires_ms=expires_ms,
    )  # fmt: skip


async def test_a_rule_reads_back_whole_in_its_workspace_only(store, ws):
    other = (await store.create_workspace(name="other")).id
    r = rule(ws)
    await store.add_rule(rule=r)
    assert await store.rule(rule_id=r.id, workspace_id=ws) == r
    assert await store.rule(rule_id=r.id, workspace_id=other) is None


async def test_rules_lists_every_rule_newest_first_revoked_and_expired_too(store, ws):
    expired, old, new = rule(ws, created_ms=500, expires_ms=600), rule(ws, created_ms=1_000), rule(ws, created_ms=2_000)
    for r in (old, new, expired):
        await store.add_rule(rule=r)
    await store.revoke_rule(rule_id=old.id, workspace_id=ws, by="user:bob", at_ms=3_000)
    assert [r.id for r in await store.rules(workspace_id=ws)] == [new.id, old.id, expired.id]


async def test_active_rules_are_the_unrevoked_unexpired_ones_of_the_policy(store, ws):
    revoked, expired, live = rule(ws), rule(ws, expires_ms=5_000), rule(ws, created_ms=2_000)
    elsewhere = rule(ws, policy="other.policy")
    for r in (live, revoked, expired, elsewhere):
        await store.add_rule(rule=r)
    await store.revoke_rule(rule_id=revoked.id, workspace_id=ws, by="user:bob", at_ms=3_000)
    assert [r.id for r in await store.active_rules(workspace_id=ws, policy="refunds.large", at_ms=5_000)] == [live.id]


async def test_unanswered_by_rules_are_live_escalations_created_while_a_rule_of_theirs_was_active(store, ws):
    live_rule, revoked = rule(ws, created_ms=1_000, expires_ms=9_000), rule(ws, created_ms=1_000)
    elsewhere = rule(ws, policy="other.policy", created_ms=0)
    for r in (live_rule, revoked, elsewhere):
        await store.add_rule(rule=r)
    await store.revoke_rule(rule_id=revoked.id, workspace_id=ws, by="user:bob", at_ms=1_500)
    before_rule = await created(store, ws, at_ms=500)
    first = await created(store, ws, at_ms=2_000)
    second = await created(store, ws, at_ms=3_000, status=ACKNOWLEDGED)
    other_agent = escalation(ws, at_ms=3_000)
    await create(store, msgspec.structs.replace(other_agent, agent_id="someone-else"))
    after_expiry = await created(store, ws, at_ms=9_000)
    ended = await created(store, ws, at_ms=4_000)
    await store.resolve(escalation_id=ended.id, resolution=human(), history_event="decided", callback=None)
    found = await store.unanswered_by_rules(since_ms=0, before_ms=10_000, limit=10)
    assert found == [(2_000, first.id), (3_000, second.id)]
    assert before_rule.id not in dict(found).values() and after_expiry.id not in dict(found).values()
    assert await store.unanswered_by_rules(since_ms=2_001, before_ms=10_000, limit=10) == [(3_000, second.id)]
    assert await store.unanswered_by_rules(since_ms=0, before_ms=2_999, limit=10) == [(2_000, first.id)]
    assert await store.unanswered_by_rules(since_ms=0, before_ms=10_000, limit=1) == [(2_000, first.id)]


async def test_revoking_a_rule_once_records_who_and_then_is_false(store, ws):
    r = rule(ws)
    await store.add_rule(rule=r)
    assert await store.revoke_rule(rule_id=r.id, workspace_id=ws, by="user:bob", at_ms=3_000) is True
    assert await store.revoke_rule(rule_id=r.id, workspace_id=ws, by="user:cy", at_ms=4_000) is False
    got = await store.rule(rule_id=r.id, workspace_id=ws)
    assert (got.revoked_by, got.revoked_ms) == ("user:bob", 3_000)


async def test_resolve_by_rule_resolves_and_records_the_rules_use(store, ws):
    r = rule(ws)
    await store.add_rule(rule=r)
    esc = await created(store, ws)
    resolution = Resolution(
        choice="approve", resolved_by="human", answered_by=f"rule:{r.id}", answered_at_ms=1_000,
        rule=RuleRef(id=r.id, created_by="user:ann"),
    )  # fmt: skip
    await store.resolve_by_rule(escalation_id=esc.id, resolution=resolution, callback=None, rule_id=r.id)
    got = await get(store, esc)
    assert (got.status, got.resolution, [h.event for h in got.history]) == (RESOLVED, resolution, ["created", "decided"])
    assert [(u.escalation_id, u.at_ms) for u in (await store.rule(rule_id=r.id, workspace_id=ws)).uses] == [(esc.id, 1_000)]


# -- quorum ----------------------------------------------------------------------------


def vote(by: str, choice: str = "approve", at_ms: int = 2_000) -> Approval:
    return Approval(by=by, choice=choice, at_ms=at_ms)


async def test_a_vote_below_the_quorum_is_kept_and_leaves_it_open(store, ws):
    esc = await created(store, ws)
    votes = await store.approve(escalation_id=esc.id, approval=vote("user:ann"), quorum=2, resolution=human(), callback=None)
    got = await get(store, esc)
    assert votes == (vote("user:ann"),) and got.approvals == votes and got.status == OPEN


async def test_the_quorumth_vote_for_a_choice_resolves_with_its_callback(store, ws):
    esc = await created(store, ws)
    cb = make.delivery(esc, "escalation.decided")
    await store.approve(escalation_id=esc.id, approval=vote("user:ann"), quorum=2, resolution=human(), callback=None)
    votes = await store.approve(escalation_id=esc.id, approval=vote("user:bob"), quorum=2, resolution=human(by="user:bob"), callback=cb)
    got = await get(store, esc)
    assert [v.by for v in votes] == ["user:ann", "user:bob"]
    assert (got.status, got.resolution.answered_by) == (RESOLVED, "user:bob")
    assert [d.id for d in await store.deliveries_of(escalation_id=esc.id)] == [cb.id]


async def test_votes_for_different_choices_do_not_add_up(store, ws):
    esc = await created(store, ws)
    await store.approve(escalation_id=esc.id, approval=vote("user:ann"), quorum=2, resolution=human(), callback=None)
    await store.approve(escalation_id=esc.id, approval=vote("user:bob", "deny"), quorum=2, resolution=human("deny"), callback=None)
    assert (await get(store, esc)).status == OPEN


async def test_a_users_second_vote_is_refused(store, ws):
    esc = await created(store, ws)
    await store.approve(escalation_id=esc.id, approval=vote("user:ann"), quorum=3, resolution=human(), callback=None)
    with pytest.raises(AlreadyApproved):
        await store.approve(escalation_id=esc.id, approval=vote("user:ann", at_ms=2_500), quorum=3, resolution=human(), callback=None)
    assert len((await get(store, esc)).approvals) == 1


async def test_a_vote_once_it_ended_is_refused(store, ws):
    esc = await created(store, ws)
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=None)
    with pytest.raises(InvalidState) as refused:
        await store.approve(escalation_id=esc.id, approval=vote("user:bob"), quorum=2, resolution=human(), callback=None)
    assert not isinstance(refused.value, AlreadyApproved)


# -- reminders and levels ------------------------------------------------------------------


def nudge(esc, *, expected_ms: int, at_ms: int = 5_000) -> Nudge:
    notice = make.delivery(esc, "escalation.escalated", kind=NOTIFICATION, due_ms=at_ms)
    return Nudge(
        escalation_id=esc.id, expected_ms=expected_ms, level=1, remind_ms=None, nudge_ms=None,
        routes=("group:leads",), history=(HistoryEntry(event="escalated", by="system:sla", at_ms=at_ms, level=1),),
        notifications=(notice,),
    )  # fmt: skip


async def test_nudges_until_and_next_nudge_read_the_open_escalations_due(store, ws):
    late, early, _ = [await created(store, ws, nudge_ms=t) for t in (9_000, 5_000, None)]
    assert await store.next_nudge() == 5_000
    assert await store.nudges_until(until_ms=9_000, limit=10) == [early.id, late.id]
    assert await store.nudges_until(until_ms=8_999, limit=10) == [early.id]


async def test_a_nudge_writes_its_level_routes_history_and_notifications(store, ws):
    esc = await created(store, ws, nudge_ms=5_000)
    n = nudge(esc, expected_ms=5_000)
    assert await store.nudge_many(items=[n]) == [esc.id]
    got = await get(store, esc)
    assert (got.level, got.nudge_ms, [h.event for h in got.history]) == (1, None, ["created", "escalated"])
    assert await store.get_escalation(escalation_id=esc.id, workspace_id=ws, routes=("group:leads",)) is not None
    assert [d.id for d in await store.deliveries_of(escalation_id=esc.id)] == [n.notifications[0].id]
    assert await store.next_nudge() is None


async def test_a_nudge_whose_expected_time_moved_writes_nothing(store, ws):
    esc = await created(store, ws, nudge_ms=5_000)
    assert await store.nudge_many(items=[nudge(esc, expected_ms=4_000)]) == []
    got = await get(store, esc)
    assert (got.level, len(got.history)) == (0, 1) and await store.deliveries_of(escalation_id=esc.id) == []


async def test_an_ended_escalation_is_neither_due_nor_nudged(store, ws):
    esc = await created(store, ws, nudge_ms=5_000)
    await store.resolve(escalation_id=esc.id, resolution=human(), history_event="decided", callback=None)
    assert await store.nudges_until(until_ms=9_000, limit=10) == [] and await store.next_nudge() is None
    assert await store.nudge_many(items=[nudge(esc, expected_ms=5_000)]) == []
