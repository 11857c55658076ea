"""CONTRACT §15 on ``GET /events``, through a real server on both backends:
a claim streams acknowledged then claimed, and a rule's decision streams
escalation.decided like any decision (on PostgreSQL through the change feed)."""

from __future__ import annotations

import asyncio
import contextlib

from escalated.agent.client import EscalatedClient
from tests.support.api import escalation_body, unique


async def _events_of(client: EscalatedClient, request: dict, act, *, count: int) -> list[tuple[str, dict]]:
    """(event, escalation) of the first ``count`` events about the escalation of ``request`` (its run id)."""
    connected = asyncio.Event()

    async def after_connect() -> None:
        await connected.wait()  # an event before the subscription would be missed
        await act()

    got: list[tuple[str, dict]] = []
    async with asyncio.timeout(20), contextlib.aclosing(client.events(on_connect=connected.set)) as stream:
        actor = asyncio.create_task(after_connect())
        async for event in stream:  # the stream connects once iterated
            if event.data["escalation"]["runId"] == request["run_id"]:
                got.append((event.event, event.data["escalation"]))
            if len(got) == count:
                break
        await actor
    return got


async def test_a_claim_streams_acknowledged_then_claimed(live, admin_key):
    name = unique("streamer")
    request = _request()
    async with EscalatedClient(live.url, live.user(name)) as reviewer, EscalatedClient(live.url, admin_key) as agent:

        async def act() -> None:
            await reviewer.claim((await agent.create_escalation(**request))["id"])

        got = await _events_of(reviewer, request, act, count=3)
    assert [e for e, _ in got] == ["escalation.created", "escalation.acknowledged", "escalation.claimed"]
    assert got[-1][1]["assignee"] == name


async def test_a_rules_decision_streams_escalation_decided(live, admin_key):
    request = _request(policy=live.policy())
    async with EscalatedClient(live.url, admin_key) as agent:
        rule = await agent.create_rule(policy=request["policy"], choice="deny", reason="never for this agent")

        async def act() -> None:
            await agent.create_escalation(**request)

        got = await _events_of(agent, request, act, count=2)
    assert [e for e, _ in got] == ["escalation.created", "escalation.decided"]
    assert got[-1][1]["resolution"]["answeredBy"] == f"rule:{rule['id']}"


def _request(**overrides) -> dict:
    body = escalation_body(**overrides)
    return {
        "policy": body["policy"], "agent_id": body["agentId"], "run_id": body["runId"], "subject": body["subject"],
        "question": body["question"], "evidence": body["evidence"], "choices": body["choices"],
    }  # fmt: skip
