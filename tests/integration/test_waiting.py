"""Waiting without a public URL: ``wait`` and the ``/events`` stream, in process."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from escalated.core.admin import PolicyRequest
from escalated.server import create_app
from escalated.core.settings import Settings, parse_db
from tests.conftest import fresh_db
from tests.support import setup
from tests.support.api import escalation_body


async def _setup(app) -> dict[str, str]:
    secrets = {
        "key": await setup.add_key(app, name="agent"),
        "alice": await setup.add_user(app, "alice"),
        "bob": await setup.add_user(app, "bob"),
    }
    await setup.set_policy(app, PolicyRequest(key="refunds.large", reviewers=("alice",)))
    await setup.set_policy(app, PolicyRequest(key="everyone.sees"))  # no reviewers: every user
    return secrets


@pytest.fixture
async def client(aiohttp_client, request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        c = await aiohttp_client(create_app(Settings(db_path=parse_db(db))))
        c.secrets = await _setup(c.app)
        yield c
        await c.close()  # before its database is dropped


def auth(client, who="key") -> dict:
    return {"Authorization": f"Bearer {client.secrets[who]}"}


async def _create(client) -> str:
    r = await client.post("/escalations", json=escalation_body(), headers=auth(client))
    assert r.status == 201
    return (await r.json())["id"]


async def test_wait_returns_promptly_on_decision(client):
    esc_id = await _create(client)
    started = time.monotonic()
    waiting = asyncio.create_task(client.get(f"/escalations/{esc_id}/wait?timeout=30", headers=auth(client)))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    r = await client.post(f"/escalations/{esc_id}/decide", json={"choice": "deny"}, headers=auth(client, "alice"))
    assert r.status == 200
    response = await asyncio.wait_for(waiting, 5)
    body = await response.json()
    assert body["status"] == "resolved" and body["resolution"]["choice"] == "deny"
    assert time.monotonic() - started < 5


async def test_wait_returns_the_open_escalation_at_the_timeout(client):
    esc_id = await _create(client)
    started = time.monotonic()
    r = await client.get(f"/escalations/{esc_id}/wait?timeout=0.3", headers=auth(client))
    assert r.status == 200 and (await r.json())["status"] == "open"
    assert 0.25 < time.monotonic() - started < 5


async def test_wait_on_a_cancelled_escalation_returns_at_once(client):
    esc_id = await _create(client)
    await client.post(f"/escalations/{esc_id}/cancel", json={"reason": "moot"}, headers=auth(client))
    r = await client.get(f"/escalations/{esc_id}/wait?timeout=30", headers=auth(client))
    assert (await r.json())["status"] == "cancelled"


@pytest.mark.parametrize("timeout", ["61", "-1", "soon"])
async def test_wait_refuses_a_bad_timeout(client, timeout):
    esc_id = await _create(client)
    r = await client.get(f"/escalations/{esc_id}/wait?timeout={timeout}", headers=auth(client))
    assert r.status == 422 and (await r.json())["code"] == "validation_failed"


async def test_wait_needs_read_scope_and_routing(client):
    esc_id = await _create(client)
    r = await client.get(f"/escalations/{esc_id}/wait?timeout=1", headers=auth(client, "bob"))
    assert r.status == 404


async def _read_events(response, count: int) -> list[dict]:
    events, current = [], {}
    async with asyncio.timeout(5):
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if not line:
                if "event" in current:
                    events.append(current)
                    if len(events) == count:
                        return events
                current = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(": ")
                current[name] = value
    return events


async def test_events_stream_delivers_created_acknowledged_and_decided(client):
    stream = await client.get("/events", headers=auth(client, "alice"))
    assert stream.headers["Content-Type"].startswith("text/event-stream")
    esc_id = await _create(client)
    await client.post(f"/escalations/{esc_id}/acknowledge", headers=auth(client, "alice"))
    await client.post(f"/escalations/{esc_id}/decide", json={"choice": "approve"}, headers=auth(client, "alice"))
    events = await _read_events(stream, 3)
    assert [e["event"] for e in events] == ["escalation.created", "escalation.acknowledged", "escalation.decided"]
    data = json.loads(events[-1]["data"])
    assert data["event"] == "escalation.decided" and data["escalation"]["id"] == esc_id
    assert data["escalation"]["status"] == "resolved"
    assert int(events[0]["id"]) < int(events[1]["id"]) < int(events[2]["id"])
    stream.close()


async def test_events_stream_hides_unrouted_escalations(client):
    stream = await client.get("/events", headers=auth(client, "bob"))
    await _create(client)  # refunds.large routes to alice only
    r = await client.post("/escalations", json=escalation_body(policy="everyone.sees"), headers=auth(client))
    assert r.status == 201
    routed_to_bob = (await r.json())["id"]
    # The first event bob gets is the one routed to him: the stream works,
    # and what came before it was held back.
    [event] = await _read_events(stream, 1)
    assert json.loads(event["data"])["escalation"]["id"] == routed_to_bob
    stream.close()
