"""What a client sees of an SLA breach (CONTRACT §6): on ``/events`` the event
is ``escalation.breached``, and breaches due together come in deadline order,
not creation order; the library's ``wait_for_outcome`` (§8) names the same
event as the callback. The real app over real HTTP, its clock moved past the
deadlines (tests/support/clock.py): no test waits for an SLA."""

from __future__ import annotations

import asyncio
import json

import pytest

from escalated.agent.client import EscalatedClient
from escalated.agent.outcome import Callback
from escalated.core.admin import PolicyRequest
from escalated.core.settings import Settings, parse_db
from escalated.http.appkeys import CLOCK
from escalated.server import create_app
from tests.conftest import fresh_db
from tests.support import setup
from tests.support.api import escalation_body
from tests.support.clock import MovableClock


@pytest.fixture
async def client(aiohttp_client, request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        clock = MovableClock()
        c = await aiohttp_client(create_app(Settings(db_path=parse_db(db), clock=clock)))
        c.clock = clock
        c.key = await setup.add_key(c.app, name="agent")
        await setup.set_policy(c.app, PolicyRequest(key="slow.sla", sla="1h", default_choice="deny"))
        await setup.set_policy(c.app, PolicyRequest(key="fast.sla", sla="10m", default_choice="deny"))
        yield c
        await c.close()  # before its database is dropped


def _auth(client) -> dict:
    return {"Authorization": f"Bearer {client.key}"}


async def _create(client, policy: str) -> str:
    r = await client.post("/escalations", json=escalation_body(policy=policy), headers=_auth(client))
    assert r.status == 201, await r.text()
    return (await r.json())["id"]


async def _breach_events(stream, count: int) -> list[tuple[str, str]]:
    """(event, escalation id) of the next ``count`` events other than ``created``."""
    found: list[tuple[str, str]] = []
    current: dict[str, str] = {}
    async with asyncio.timeout(10):
        async for raw in stream.content:
            line = raw.decode().rstrip("\n")
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(": ")
                current[name] = value
                continue
            if current.get("event", "escalation.created") != "escalation.created":
                found.append((current["event"], json.loads(current["data"])["escalation"]["id"]))
                if len(found) == count:
                    return found
            current = {}
    return found


async def test_a_breach_is_an_escalation_breached_event_and_breaches_come_in_deadline_order(client):
    stream = await client.get("/events", headers=_auth(client))
    assert stream.status == 200
    later = await _create(client, "slow.sla")  # created first, due in an hour
    sooner = await _create(client, "fast.sla")  # created second, due in ten minutes
    client.clock.advance(2 * 3600)  # both deadlines pass in one step
    client.app[CLOCK].wake()
    events = await _breach_events(stream, 2)
    assert events == [("escalation.breached", sooner), ("escalation.breached", later)]
    r = await client.get(f"/escalations/{sooner}", headers=_auth(client))
    resolution = (await r.json())["resolution"]
    assert (resolution["resolvedBy"], resolution["answeredBy"], resolution["choice"]) == ("timeout", "system", "deny")


async def test_wait_for_outcome_of_a_breach_names_the_event_the_callback_carried(client, receiver):
    body = escalation_body(policy="fast.sla", resume={"mode": "webhook", "url": receiver.url})
    r = await client.post("/escalations", json=body, headers=_auth(client))
    esc_id = (await r.json())["id"]
    client.clock.advance(3600)
    client.app[CLOCK].wake()
    [got] = await receiver.wait_for(1)
    async with EscalatedClient(str(client.make_url("")), client.key) as agent:
        outcome = await agent.wait_for_outcome(esc_id, timeout_s=5)
    assert isinstance(outcome, Callback) and outcome.resolved_by == "timeout"
    assert outcome.event == got.headers["x-service-event"] == "escalation.breached"
    assert outcome.body == json.loads(got.body)
