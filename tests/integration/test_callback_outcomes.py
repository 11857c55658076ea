"""What a callback's answer makes of its delivery, as a client and an
operator see it (CONTRACT §5): any 2xx is success at once; no answer within
the delivery timeout is a failed attempt; a delivery that spends its retries
is ``failed`` in ``deliveries`` and in the metrics. The real app over real
HTTP, a real receiver, short retry flags."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client.parser import text_string_to_metric_families

from escalated.core.admin import PolicyRequest
from escalated.core.settings import Settings, parse_db
from escalated.server import create_app
from tests.conftest import fresh_db
from tests.support import setup
from tests.support.api import escalation_body
from tests.support.wait import eventually


@pytest.fixture
def delivery_timeout_s() -> float:
    return 10.0


@pytest.fixture
async def client(aiohttp_client, request, fn_backend, tmp_path, delivery_timeout_s):
    """Retries 50 ms apart for 300 ms; a test's ``delivery_timeout_s`` fixture sets the attempt's timeout."""
    timeout_s = delivery_timeout_s
    with fresh_db(request, fn_backend, tmp_path) as db:
        settings = Settings(db_path=parse_db(db), retry_schedule_s=(0.05,), retry_for_s=0.3, delivery_timeout_s=timeout_s)
        c = await aiohttp_client(create_app(settings))
        c.key = await setup.add_key(c.app, name="agent")
        await setup.set_policy(c.app, PolicyRequest(key="refunds.large"))
        yield c
        await c.close()  # before its database is dropped


def _auth(client) -> dict:
    return {"Authorization": f"Bearer {client.key}"}


async def _decided_with_callback(client, receiver) -> str:
    body = escalation_body(resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
    r = await client.post("/escalations", json=body, headers=_auth(client))
    assert r.status == 201, await r.text()
    esc_id = (await r.json())["id"]
    r = await client.post(f"/escalations/{esc_id}/decide", json={"choice": "approve"}, headers=_auth(client))
    assert r.status == 200, await r.text()
    return esc_id


async def _callback(client, esc_id: str) -> dict:
    r = await client.get(f"/escalations/{esc_id}/deliveries", headers=_auth(client))
    assert r.status == 200
    [callback] = [d for d in (await r.json())["data"] if d["kind"] == "callback"]
    return callback


async def _settled(client, esc_id: str) -> dict | None:
    callback = await _callback(client, esc_id)
    return callback if callback["status"] != "pending" else None


@pytest.mark.parametrize("status", [201, 202, 204])
async def test_any_2xx_answer_delivers_the_callback_at_the_first_attempt(client, receiver, status):
    receiver.status = status
    esc_id = await _decided_with_callback(client, receiver)
    callback = await eventually(lambda: _settled(client, esc_id), what="the callback settled")
    assert callback["status"] == "delivered"
    assert [a["statusCode"] for a in callback["attempts"]] == [status]
    assert callback["attempts"][0]["error"] is None and callback["nextAttemptAt"] is None
    assert len(receiver.received) == 1


async def test_an_exhausted_callback_is_failed_in_deliveries_and_counted_in_the_metrics(client, receiver):
    receiver.status = 503
    esc_id = await _decided_with_callback(client, receiver)
    callback = await eventually(lambda: _settled(client, esc_id), what="the callback's retries spent")
    assert callback["status"] == "failed" and callback["nextAttemptAt"] is None
    assert len(callback["attempts"]) >= 2
    assert all(a["statusCode"] == 503 and a["error"] == "HTTP 503" for a in callback["attempts"])
    r = await client.get("/metrics")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(await r.text())
        for s in family.samples
    }
    assert samples[("escalated_deliveries_failed_total", ())] == 1
    failed_attempts = ("escalated_delivery_attempts_total", (("kind", "callback"), ("outcome", "failed")))
    assert samples[failed_attempts] == len(callback["attempts"])


@pytest.mark.parametrize("delivery_timeout_s", [0.5])
async def test_a_receiver_that_does_not_answer_within_the_delivery_timeout_is_a_failed_attempt(client, receiver):
    receiver.hold = asyncio.Event()
    esc_id = await _decided_with_callback(client, receiver)
    asyncio.get_running_loop().call_later(1.0, receiver.hold.set)  # a 200, but only after twice the timeout
    callback = await eventually(lambda: _settled(client, esc_id), what="the held attempt timed out")
    [attempt] = callback["attempts"]  # the 300 ms window is spent by then
    assert callback["status"] == "failed"
    assert attempt["statusCode"] is None and attempt["error"] == "timed out after 0.5s"
    assert attempt["durationMs"] >= 450


async def test_a_retry_by_hand_of_an_exhausted_callback_gets_a_fresh_retry_window(client, receiver):
    """Not one last attempt: the callback is retried on the schedule again,
    for the whole window, and fails again only when that is spent."""
    receiver.status = 503
    esc_id = await _decided_with_callback(client, receiver)
    failed = await eventually(lambda: _settled(client, esc_id), what="the callback's retries spent")
    before = len(failed["attempts"])
    r = await client.post(f"/escalations/{esc_id}/deliveries/retry", headers=_auth(client))
    assert r.status == 202 and (await r.json())["id"] == failed["id"]
    again = await eventually(lambda: _settled(client, esc_id), what="the second window spent")
    assert again["status"] == "failed" and again["id"] == failed["id"]
    assert len(again["attempts"]) >= before + 2


async def _samples(client) -> dict:
    r = await client.get("/metrics")
    assert r.status == 200
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(await r.text())
        for s in family.samples
    }


async def test_the_metrics_show_the_outbox_backlog_and_the_deadlines_armed(client, receiver):
    """``escalated_deliveries_pending`` is the outbox's backlog as the database holds it, and
    ``escalated_deadlines_armed`` the SLA deadlines the clock holds in memory: both were
    declared and never set, so they read 0 whatever happened."""
    await setup.set_policy(client.app, PolicyRequest(key="refunds.timed", sla="1m", default_choice="deny"))
    before = await _samples(client)
    assert before[("escalated_deliveries_pending", ())] == 0
    assert before[("escalated_deadlines_armed", ())] == 0

    r = await client.post("/escalations", json=escalation_body(policy="refunds.timed"), headers=_auth(client))
    assert r.status == 201, await r.text()

    async def armed() -> bool:
        return (await _samples(client))[("escalated_deadlines_armed", ())] == 1

    await eventually(armed, what="the new escalation's deadline armed in the metrics")

    receiver.hold = asyncio.Event()  # the callback's attempt waits: its delivery stays pending meanwhile
    esc_id = await _decided_with_callback(client, receiver)
    assert (await _samples(client))[("escalated_deliveries_pending", ())] == 1
    receiver.hold.set()
    callback = await eventually(lambda: _settled(client, esc_id), what="the callback delivered")
    assert callback["status"] == "delivered"
    assert (await _samples(client))[("escalated_deliveries_pending", ())] == 0
