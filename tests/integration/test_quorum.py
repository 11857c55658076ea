"""Quorum (CONTRACT §15) through the real app on port 0, on both backends:
approvals by distinct users, any other choice at once, keys never count,
and one resolution with one callback under races (two last approvals at
once, on one replica and on two; the last approval against the breach).
Also the level a reviewer reaches, as that reviewer sees it on ``/events``.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from escalated.core.admin import PolicyRequest
from escalated.core.settings import Settings, parse_db
from escalated.http.appkeys import CLOCK
from escalated.timeutil import parse_timestamp_ms
from escalated.server import create_app
from tests.conftest import fresh_db
from tests.integration.test_waiting import _read_events
from tests.support import setup
from tests.support.api import escalation_body
from tests.support.clock import MovableClock
from tests.support.receiver import Receiver

RACES = 15


async def _setup(app) -> dict[str, str]:
    secrets = {"key": await setup.add_key(app, name="agent")}
    for name in ("alice", "bob", "carol", "dave"):
        secrets[name] = await setup.add_user(app, name)
    quorum = {"quorum": "2", "quorum_choices": ("approve",)}
    await setup.set_policy(app, PolicyRequest(key="two.approve", reviewers=("alice", "bob", "carol"), **quorum))
    await setup.set_policy(app, PolicyRequest(key="three.approve", quorum="3", quorum_choices=("approve",)))
    await setup.set_policy(app, PolicyRequest(key="two.timed", sla="1h", default_choice="deny", **quorum))
    await setup.set_policy(app, PolicyRequest(key="late.dave", reviewers=("alice",), levels=("1h:dave",)))
    await setup.set_policy(app, PolicyRequest(key="for.dave", reviewers=("dave",)))
    return secrets


@pytest.fixture
async def db(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as found:
        yield found


@pytest.fixture
async def client(aiohttp_client, db):
    clock = MovableClock()
    c = await aiohttp_client(create_app(Settings(db_path=parse_db(db), retry_schedule_s=(0.1,), clock=clock)))
    c.clock = clock
    c.secrets = await _setup(c.app)
    yield c
    await c.close()  # before its database is dropped


def move_to(client, at_ms: int) -> None:
    """The server's clock to ``at_ms``, and its SLA clock looking at once."""
    client.clock.advance((at_ms - client.clock()) / 1000)
    client.app[CLOCK].wake()


def auth(client, who="key") -> dict:
    return {"Authorization": f"Bearer {client.secrets[who]}"}


async def _create(client, policy: str, receiver: Receiver | None = None) -> str:
    resume = {"resume": {"mode": "webhook", "url": receiver.url}} if receiver else {}
    r = await client.post("/escalations", json=escalation_body(policy=policy, **resume), headers=auth(client))
    assert r.status == 201, await r.text()
    return (await r.json())["id"]


async def _decide(client, esc_id: str, who: str, choice: str = "approve") -> tuple[int, dict]:
    r = await client.post(f"/escalations/{esc_id}/decide", json={"choice": choice}, headers=auth(client, who))
    return r.status, await r.json()


async def _get(client, esc_id: str) -> dict:
    r = await client.get(f"/escalations/{esc_id}", headers=auth(client))
    return await r.json()


async def test_a_quorum_choice_resolves_at_the_second_distinct_user_with_one_callback(client, receiver):
    esc_id = await _create(client, "two.approve", receiver)
    status, first = await _decide(client, esc_id, "alice")
    assert status == 200 and first["status"] == "open" and first["resolution"] is None
    assert [(a["by"], a["choice"]) for a in first["approvals"]] == [("alice", "approve")]
    assert first["history"][-1]["event"] == "approved" and first["history"][-1]["by"] == "alice"
    status, done = await _decide(client, esc_id, "bob")
    assert status == 200 and done["status"] == "resolved"
    assert (done["resolution"]["choice"], done["resolution"]["answeredBy"]) == ("approve", "bob")
    assert [a["by"] for a in done["approvals"]] == ["alice", "bob"]
    [callback] = await receiver.wait_for(1)
    body = json.loads(callback.body)
    assert (body["escalationId"], body["choice"], body["answeredBy"]) == (esc_id, "approve", "bob")


async def test_the_same_user_twice_is_409_already_approved(client):
    esc_id = await _create(client, "two.approve")
    assert (await _decide(client, esc_id, "alice"))[0] == 200
    status, problem = await _decide(client, esc_id, "alice")
    assert status == 409 and problem["code"] == "already_approved"
    assert [a["by"] for a in (await _get(client, esc_id))["approvals"]] == ["alice"]


async def test_any_other_choice_resolves_at_once(client):
    esc_id = await _create(client, "two.approve")
    await _decide(client, esc_id, "alice")
    status, done = await _decide(client, esc_id, "bob", "deny")
    assert status == 200 and done["status"] == "resolved" and done["resolution"]["choice"] == "deny"
    assert [a["by"] for a in done["approvals"]] == ["alice"]


async def test_an_api_key_never_counts_toward_a_quorum(client):
    esc_id = await _create(client, "two.approve")
    status, problem = await _decide(client, esc_id, "key")
    assert status == 403 and problem["code"] == "user_token_required"
    assert (await _get(client, esc_id))["approvals"] == []
    status, done = await _decide(client, esc_id, "key", "deny")  # not a quorum choice: the key decides it
    assert status == 200 and done["resolution"]["answeredBy"] == "key:agent"


async def test_two_last_approvals_at_once_resolve_once_with_one_callback(client, receiver):
    ids = [await _create(client, "three.approve", receiver) for _ in range(RACES)]
    for esc_id in ids:
        assert (await _decide(client, esc_id, "carol"))[0] == 200
    await asyncio.gather(*(_decide(client, e, "alice") for e in ids))
    outcomes = await asyncio.gather(*(pair for e in ids for pair in (_decide(client, e, "bob"), _decide(client, e, "dave"))))
    await _assert_resolved_once(client, receiver, ids, outcomes)


async def test_two_last_approvals_on_two_replicas_resolve_once(aiohttp_client, db, receiver, fn_backend):
    if fn_backend != "postgres":
        pytest.skip("one SQLite database has one server")
    first = await aiohttp_client(create_app(Settings(db_path=parse_db(db))))
    first.secrets = await _setup(first.app)
    second = await aiohttp_client(create_app(Settings(db_path=parse_db(db))))
    second.secrets = first.secrets
    try:
        ids = [await _create(first, "two.approve", receiver) for _ in range(RACES)]
        outcomes = await asyncio.gather(
            *(pair for e in ids for pair in (_decide(first, e, "alice"), _decide(second, e, "bob")))
        )
        for esc_id, pair in zip(ids, (outcomes[i : i + 2] for i in range(0, len(outcomes), 2)), strict=True):
            assert sorted(status for status, _ in pair) == [200, 200]  # a vote, then the vote that completes it
            assert sum(body["status"] == "resolved" for _, body in pair) == 1, esc_id
        await _assert_resolved_once(first, receiver, ids, [])
    finally:
        await second.close()
        await first.close()


async def _assert_resolved_once(client, receiver: Receiver, ids: list[str], outcomes: list) -> None:
    """Each of ``ids`` resolved once, with one callback; of its two racing
    last approvals (``outcomes`` in pairs) one resolved it and the other is 409."""
    got = await receiver.wait_for(len(ids))
    await asyncio.sleep(0.3)  # a duplicate callback would arrive within this
    assert sorted(json.loads(g.body)["escalationId"] for g in receiver.received) == sorted(ids)
    for i, esc_id in enumerate(ids):
        stored = await _get(client, esc_id)
        assert stored["status"] == "resolved"
        assert [h["event"] for h in stored["history"]].count("decided") == 1
        if outcomes:
            pair = outcomes[2 * i : 2 * i + 2]
            assert sorted(status for status, _ in pair) == [200, 409], pair
            winner = next(body for status, body in pair if status == 200)
            assert stored["resolution"]["answeredBy"] == winner["resolution"]["answeredBy"]
    assert len(got) == len(ids)


async def test_the_last_approval_against_the_breach_resolves_once(client, receiver):
    ids = [await _create(client, "two.timed", receiver) for _ in range(RACES)]
    for esc_id in ids:
        assert (await _decide(client, esc_id, "alice"))[0] == 200
    deadline_at = (await _get(client, ids[-1]))["deadlineAt"]  # the latest: an hour away
    move_to(client, parse_timestamp_ms(deadline_at))  # every deadline is due: the breaches start
    outcomes = await asyncio.gather(*(_decide(client, e, "bob") for e in ids))
    got = await receiver.wait_for(len(ids))
    await asyncio.sleep(0.3)  # a duplicate callback would arrive within this
    assert sorted(json.loads(g.body)["escalationId"] for g in receiver.received) == sorted(ids)
    for esc_id, (status, _) in zip(ids, outcomes, strict=True):
        stored = await _get(client, esc_id)
        endings = [h["event"] for h in stored["history"] if h["event"] in ("decided", "breached")]
        assert len(endings) == 1
        assert status in (200, 409)
        assert (status == 200) == (stored["resolution"]["resolvedBy"] == "human")
        body = next(json.loads(g.body) for g in got if json.loads(g.body)["escalationId"] == esc_id)
        assert body["resolvedBy"] == stored["resolution"]["resolvedBy"]


async def test_a_reviewer_added_by_a_level_sees_it_on_events_and_decides_it(client):
    stream = await client.get("/events", headers=auth(client, "dave"))
    esc_id = await _create(client, "late.dave")
    # A stream filters each event when it takes it from its queue, asking who
    # may see the escalation then: had the level come first, dave would be
    # shown the create as one of its reviewers. One of his own after it, seen,
    # says his stream has passed the create by while he was no reviewer of it.
    marker = await _create(client, "for.dave")
    [first] = await _read_events(stream, 1)
    assert json.loads(first["data"])["escalation"]["id"] == marker  # dave did not see the create
    client.clock.advance(3600)  # the level, an hour after the create
    client.app[CLOCK].wake()
    [event] = await _read_events(stream, 1)  # the next is the level
    stream.close()
    assert event["event"] == "escalation.escalated"
    data = json.loads(event["data"])["escalation"]
    assert data["id"] == esc_id and data["level"] == 1
    assert data["history"][-1]["event"] == "escalated" and data["history"][-1]["level"] == 1
    status, done = await _decide(client, esc_id, "dave", "deny")
    assert status == 200 and done["resolution"]["answeredBy"] == "dave"


async def test_a_remembered_decision_is_never_made_for_a_quorum_choice(client):
    rule = {"policy": "two.approve", "choice": "approve", "match": {"agentId": "billing-agent"}, "reason": "usual"}
    r = await client.post("/rules", json=rule, headers=auth(client, "alice"))
    assert r.status == 422 and (await r.json())["errors"][0]["field"] == "choice"
    r = await client.post("/rules", json={**rule, "choice": "deny"}, headers=auth(client, "alice"))
    assert r.status == 201  # any other choice may be remembered
