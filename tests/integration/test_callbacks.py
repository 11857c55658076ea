"""Callbacks over real HTTP from a real `escalated serve` (CONTRACT §5)."""

from __future__ import annotations

import json

import aiohttp
import pytest

from escalated.agent.signing import verify
from tests.conftest import fresh_db
from tests.support.api import Api, escalation_body
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess
from tests.support.wait import eventually

FAST_RETRY = ("--retry-schedule", "100ms,200ms", "--retry-for", "1h")


@pytest.fixture(scope="module")
def fast_server(request, backend, tmp_path_factory):
    """One server per module and backend; each test has its own receiver and escalations."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("callbacks")) as db:
        proc = ServerProcess(db=db, args=FAST_RETRY).start()
        proc.cli("policy", "set", "refunds.large")
        yield proc
        proc.stop()


@pytest.fixture
async def api(fast_server):
    async with aiohttp.ClientSession() as session:
        yield Api(fast_server.url, fast_server.bootstrap_key, session)


async def test_signed_callback_verifies_over_the_raw_bytes(api, receiver):
    esc = await api.create(resume={"mode": "webhook", "url": receiver.url, "secret": "s3cret"})
    status, _decided = await api.decide(esc["id"], reason="fine")
    assert status == 200
    [got] = await receiver.wait_for(1)
    assert verify(got.body, got.headers["x-service-signature"], "s3cret")
    assert not verify(got.body, got.headers["x-service-signature"], "other")
    assert got.headers["x-service-event"] == "escalation.decided"
    assert got.headers["x-service-delivery"].startswith("dlv_")
    assert got.headers["x-service-signature"].startswith("v1=")


async def test_callback_body_holds_exactly_the_contract_fields(api, receiver):
    esc = await api.create(runId="run-of-the-callback", resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
    await api.decide(esc["id"])
    [got] = await receiver.wait_for(1)
    body = json.loads(got.body)
    assert list(body) == ["escalationId", "runId", "agentId", "policy", "choice", "resolvedBy", "answeredBy", "answeredAt"]
    assert body["escalationId"] == esc["id"]
    assert body["runId"] == "run-of-the-callback" and body["agentId"] == "billing-agent"
    assert body["policy"] == "refunds.large" and body["choice"] == "approve"
    assert body["resolvedBy"] == "human" and body["answeredBy"] == "key:bootstrap"
    stored = await api.get(esc["id"])
    assert body["answeredAt"] == stored["resolution"]["answeredAt"]


async def test_response_is_sent_only_when_response_fields_exist(api, receiver):
    fields = [
        {"type": "number", "name": "amount", "label": "Amount", "min": 0, "step": 0.5},
        {"type": "select", "name": "reason", "label": "Reason", "options": [{"value": "dup", "label": "Duplicate"}]},
    ]
    esc = await api.create(responseFields=fields, resume={"mode": "webhook", "url": receiver.url})
    status, _ = await api.decide(esc["id"], response={"amount": 12.5, "reason": "dup"})
    assert status == 200
    [got] = await receiver.wait_for(1)
    assert json.loads(got.body)["response"] == {"amount": 12.5, "reason": "dup"}


async def test_unsigned_callback_has_no_signature_header(api, receiver):
    esc = await api.create(resume={"mode": "webhook", "url": receiver.url})
    await api.decide(esc["id"])
    [got] = await receiver.wait_for(1)
    assert "x-service-signature" not in got.headers
    assert got.headers["x-service-event"] == "escalation.decided"
    assert (await api.get(esc["id"]))["resume"]["signed"] is False


async def test_retries_after_5xx_and_401_keep_delivery_id_and_bytes(api, receiver):
    receiver.script[:] = [500, 401, 503]
    esc = await api.create(resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
    await api.decide(esc["id"])
    attempts = await receiver.wait_for(4)
    assert len({a.headers["x-service-delivery"] for a in attempts}) == 1
    assert len({a.body for a in attempts}) == 1
    assert len({a.headers["x-service-signature"] for a in attempts}) == 1
    delivery = await api.wait_delivery(esc["id"], "delivered")
    assert [a["statusCode"] for a in delivery["attempts"]] == [500, 401, 503, 200]
    assert all(a["durationMs"] >= 0 for a in delivery["attempts"])


async def test_exhausted_delivery_is_failed_and_can_be_retried_by_hand(request, fn_backend, tmp_path, receiver):
    with fresh_db(request, fn_backend, tmp_path) as db:
        await _exhausted_delivery(ServerProcess(db=db, args=("--retry-schedule", "50ms", "--retry-for", "300ms")), receiver)


async def _exhausted_delivery(proc: ServerProcess, receiver: Receiver) -> None:
    proc.start()
    try:
        proc.cli("policy", "set", "refunds.large")
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            receiver.script[:] = [500] * 100
            esc = await api.create(resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
            await api.decide(esc["id"])
            failed = await api.wait_delivery(esc["id"], "failed")
            assert failed["nextAttemptAt"] is None and len(failed["attempts"]) >= 2
            receiver.script.clear()
            count = len(receiver.received)
            status, body, _ = await api.call("POST", f"/escalations/{esc['id']}/deliveries/retry")
            assert status == 202 and body["id"] == failed["id"]
            await api.wait_delivery(esc["id"], "delivered")
            assert receiver.received[-1].headers["x-service-delivery"] == failed["id"]
            assert receiver.received[-1].body == receiver.received[count - 1].body
    finally:
        proc.stop()


async def test_retry_without_callback_is_409(api):
    esc = await api.create()
    status, body, _ = await api.call("POST", f"/escalations/{esc['id']}/deliveries/retry")
    assert status == 409 and body["code"] == "invalid_state"


async def test_redirects_are_not_followed(api, receiver):
    target = await Receiver().start()
    try:
        receiver.script[:] = [302]
        receiver.headers["Location"] = target.url
        esc = await api.create(resume={"mode": "webhook", "url": receiver.url})
        await api.decide(esc["id"])
        await receiver.wait_for(2)  # the 302 is a failed attempt; the retry goes to the same URL
        assert target.received == []
    finally:
        await target.stop()


async def test_metadata_callback_url_is_refused_at_create(api):
    status, body, _ = await api.call(
        "POST",
        "/escalations",
        json={**escalation_body(), "resume": {"mode": "webhook", "url": "http://169.254.169.254/latest"}},
    )
    assert status == 422 and body["errors"][0]["field"] == "resume.url"


async def test_receiver_down_across_kill_9_still_gets_the_callback(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        await _receiver_down_across_kill_9(ServerProcess(db=db, args=FAST_RETRY))


async def _receiver_down_across_kill_9(proc: ServerProcess) -> None:
    receiver = await Receiver().start()
    port = receiver.port
    await receiver.stop()  # down: connection refused
    proc.start()
    try:
        proc.cli("policy", "set", "refunds.large")
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            esc = await api.create(resume={"mode": "webhook", "url": f"http://127.0.0.1:{port}/resume", "secret": "s"})
            await api.decide(esc["id"])
            await eventually(
                lambda: attempted(api, esc["id"]), timeout_s=10, what="the first attempt recorded before the kill"
            )
            proc.kill()
            receiver = await Receiver(port=port).start()
            proc.start()
            api.url = proc.url
            [got] = await receiver.wait_for(1)
            assert json.loads(got.body)["escalationId"] == esc["id"]
            assert verify(got.body, got.headers["x-service-signature"], "s")
    finally:
        proc.stop()
        await receiver.stop()


async def attempted(api: Api, escalation_id: str) -> bool:
    return bool((await api.deliveries(escalation_id))[0]["attempts"])
