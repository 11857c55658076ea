"""The receiver helper behind a real aiohttp server on port 0, fed real HTTP posts."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from escalated.agent.receiver import Callback, SeenDeliveries, make_receiver_app, start_receiver
from escalated.agent.signing import sign

SECRET = "whsec_receiver_test"
BODY = json.dumps(
    {
        "escalationId": "esc_01TEST",
        "runId": "thread-42",
        "agentId": "billing-agent",
        "policy": "refunds.large",
        "choice": "approve",
        "response": {"amount": 120},
        "resolvedBy": "human",
        "answeredBy": "alice",
        "answeredAt": "2026-11-22T10:15:00.123Z",
    },
    separators=(",", ":"),
).encode()


def headers(body: bytes = BODY, *, secret: str = SECRET, delivery: str = "dlv_01") -> dict[str, str]:
    return {
        "content-type": "application/json",
        "x-service-event": "escalation.decided",
        "x-service-delivery": delivery,
        "x-service-signature": sign(body, secret),
    }


class Recorder:
    def __init__(self) -> None:
        self.calls: list[Callback] = []

    async def __call__(self, callback: Callback) -> None:
        self.calls.append(callback)


@pytest.fixture
async def recorder():
    return Recorder()


@pytest.fixture
async def agent_receiver(recorder):
    async with await start_receiver(make_receiver_app(recorder, secret=SECRET)) as running:
        yield running


async def post(url: str, body: bytes, hdrs: dict[str, str]) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as session, session.post(url + "/resume", data=body, headers=hdrs) as resp:
        return resp.status, await resp.json(content_type=None)


async def test_valid_signature_hands_the_parsed_callback_to_the_handler(agent_receiver, recorder):
    status, answer = await post(agent_receiver.url, BODY, headers())
    assert (status, answer) == (200, {"ok": True})
    assert recorder.calls == [
        Callback(
            escalation_id="esc_01TEST",
            run_id="thread-42",
            agent_id="billing-agent",
            policy="refunds.large",
            choice="approve",
            response={"amount": 120},
            resolved_by="human",
            answered_by="alice",
            answered_at="2026-11-22T10:15:00.123Z",
            event="escalation.decided",
            delivery_id="dlv_01",
            raw=BODY,
        )
    ]
    assert recorder.calls[0].raw == BODY


async def test_tampered_body_is_401_and_handler_not_called(agent_receiver, recorder):
    tampered = BODY.replace(b'"approve"', b'"deny"')
    status, answer = await post(agent_receiver.url, tampered, headers(BODY))
    assert status == 401 and answer["code"] == "invalid_signature"
    assert recorder.calls == []


async def test_wrong_secret_is_401_and_handler_not_called(agent_receiver, recorder):
    status, _ = await post(agent_receiver.url, BODY, headers(secret="someone-else"))
    assert status == 401
    assert recorder.calls == []


async def test_missing_signature_header_is_401_and_handler_not_called(agent_receiver, recorder):
    hdrs = headers()
    del hdrs["x-service-signature"]
    status, _ = await post(agent_receiver.url, BODY, hdrs)
    assert status == 401
    assert recorder.calls == []


@pytest.mark.parametrize("bad", ["v1=", "v1=zz", "v2=" + "0" * 64, "garbage", sign(BODY, SECRET)[3:]])
async def test_malformed_signature_header_is_401_and_handler_not_called(agent_receiver, recorder, bad):
    status, _ = await post(agent_receiver.url, BODY, {**headers(), "x-service-signature": bad})
    assert status == 401
    assert recorder.calls == []


async def test_reserialised_json_breaks_verification(agent_receiver, recorder):
    # Same meaning, different bytes: why receivers must verify the raw body they read.
    reserialised = json.dumps(json.loads(BODY)).encode()
    assert json.loads(reserialised) == json.loads(BODY) and reserialised != BODY
    status, _ = await post(agent_receiver.url, reserialised, headers(BODY))
    assert status == 401
    assert recorder.calls == []


async def test_repeated_delivery_id_calls_the_handler_once(agent_receiver, recorder):
    first = await post(agent_receiver.url, BODY, headers())
    repeat = await post(agent_receiver.url, BODY, headers())
    assert first == (200, {"ok": True})
    assert repeat == (200, {"ok": True, "duplicate": True})
    assert len(recorder.calls) == 1


async def test_different_delivery_ids_are_both_handled(agent_receiver, recorder):
    await post(agent_receiver.url, BODY, headers(delivery="dlv_01"))
    await post(agent_receiver.url, BODY, headers(delivery="dlv_02"))
    assert [c.delivery_id for c in recorder.calls] == ["dlv_01", "dlv_02"]


async def test_handler_failure_is_500_and_the_retry_is_handled():
    attempts: list[str] = []

    async def flaky(callback: Callback) -> None:
        attempts.append(callback.delivery_id)
        if len(attempts) == 1:
            raise RuntimeError("database down")

    async with await start_receiver(make_receiver_app(flaky, secret=SECRET)) as running:
        failed = await post(running.url, BODY, headers())
        retried = await post(running.url, BODY, headers())
    assert failed[0] == 500 and "database down" not in json.dumps(failed[1])
    assert retried == (200, {"ok": True})
    assert attempts == ["dlv_01", "dlv_01"]


async def test_concurrent_repeat_waits_for_the_first_copy():
    started, release = asyncio.Event(), asyncio.Event()
    calls: list[Callback] = []

    async def slow(callback: Callback) -> None:
        calls.append(callback)
        started.set()
        await release.wait()

    async with await start_receiver(make_receiver_app(slow, secret=SECRET)) as running:
        first = asyncio.create_task(post(running.url, BODY, headers()))
        async with asyncio.timeout(5):
            await started.wait()
        status, answer = await post(running.url, BODY, headers())
        release.set()
        assert await first == (200, {"ok": True})
    assert status == 409 and answer["code"] == "delivery_in_progress"
    assert len(calls) == 1


async def test_without_a_secret_unsigned_callbacks_are_accepted():
    recorder = Recorder()
    async with await start_receiver(make_receiver_app(recorder, secret=None, path="/cb")) as running, aiohttp.ClientSession() as session:
        hdrs = {"x-service-event": "escalation.breached", "x-service-delivery": "dlv_09"}
        async with session.post(running.url + "/cb", data=BODY, headers=hdrs) as resp:
            assert resp.status == 200
    assert recorder.calls[0].event == "escalation.breached"


async def test_verified_body_that_is_not_a_callback_is_400_and_handler_not_called(agent_receiver, recorder):
    body = b'{"hello": "world"}'
    status, answer = await post(agent_receiver.url, body, headers(body))
    assert status == 400 and answer["code"] == "invalid_callback"
    assert recorder.calls == []


async def test_sync_handler_is_supported():
    seen: list[str] = []
    app = make_receiver_app(lambda cb: seen.append(cb.choice), secret=SECRET)
    async with await start_receiver(app) as running:
        assert (await post(running.url, BODY, headers()))[0] == 200
    assert seen == ["approve"]


def test_seen_deliveries_forgets_the_oldest_beyond_its_bound():
    seen = SeenDeliveries(max_size=2)
    for delivery_id in ("a", "b", "c"):
        seen.add(delivery_id)
    assert "a" not in seen and "b" in seen and "c" in seen and len(seen) == 2


async def test_a_body_its_content_encoding_cannot_decode_is_400_and_handler_not_called(agent_receiver, recorder):
    body = b"not gzip at all"
    status, answer = await post(agent_receiver.url, body, {**headers(body), "Content-Encoding": "gzip"})
    assert status == 400 and answer["code"] == "invalid_callback" and "could not be read" in answer["detail"]
    assert recorder.calls == []
