"""Error parsing, create retries and SSE reconnects of the client.

The peer here is a small real aiohttp app on port 0 that answers what a
server (or a proxy in front of it) may answer: it stands in for the far end
only to produce failures the real server will not produce on demand. The
client's behaviour against the real ``escalated serve`` is in
tests/integration/test_client.py.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time

import pytest
from aiohttp import web

from escalated.agent.client import ApiError, EscalatedClient, Event, ServerUnreachable, SseParser
from escalated.agent.receiver import start_receiver

PROBLEM = {
    "type": "urn:escalated:error:validation_failed",
    "title": "Validation failed",
    "status": 422,
    "detail": "1 problem",
    "code": "validation_failed",
    "errors": [{"field": "choices[1].id", "message": "duplicate choice id"}],
}
CREATE = dict(
    policy="refunds.large",
    agent_id="billing-agent",
    run_id="thread-1",
    subject={"type": "order", "id": "o-1", "label": "Order #1"},
    question="Refund?",
    evidence=["customer asked"],
    choices=[{"id": "approve", "label": "Approve"}],
)


class Peer:
    """Answers each request with the next scripted response and records what it got."""

    def __init__(self, *answers: web.Response):
        self.answers = list(answers)
        self.requests: list[tuple[str, str, dict, bytes]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.method, request.path_qs, dict(request.headers), await request.read()))
        return self.answers.pop(0)


@pytest.fixture
async def serve():
    running = []

    async def start(peer: Peer) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", peer.handle)
        receiver = await start_receiver(app)
        running.append(receiver)
        return receiver.url

    yield start
    for receiver in running:
        await receiver.close()


def problem(status: int, **extra) -> web.Response:
    body = {**PROBLEM, "status": status, **extra.pop("body", {})}
    return web.json_response(body, status=status, content_type="application/problem+json", **extra)


def created() -> web.Response:
    return web.json_response({"id": "esc_1", "status": "open"}, status=201)


async def test_problem_json_becomes_api_error_with_every_field(serve):
    url = await serve(Peer(problem(422)))
    async with EscalatedClient(url, "ain_live_x") as client:
        with pytest.raises(ApiError) as caught:
            await client.create_escalation(**CREATE)
    error = caught.value
    assert (error.status, error.code, error.title, error.detail) == (422, "validation_failed", "Validation failed", "1 problem")
    assert error.errors == PROBLEM["errors"]
    assert error.retry_after_s is None


async def test_non_json_error_body_still_gets_status_and_code(serve):
    url = await serve(Peer(web.Response(status=502, text="<html>bad gateway</html>")))
    async with EscalatedClient(url, "ain_live_x") as client:
        with pytest.raises(ApiError) as caught:
            await client.get_escalation("esc_1")
    assert (caught.value.status, caught.value.code, caught.value.errors) == (502, "http_502", None)


async def test_retry_after_seconds_and_http_date_are_parsed(serve):
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    url = await serve(
        Peer(problem(429, headers={"Retry-After": "7"}), problem(429, headers={"Retry-After": in_a_minute}))
    )
    async with EscalatedClient(url, "ain_live_x") as client:
        with pytest.raises(ApiError) as seconds:
            await client.get_escalation("esc_1")
        with pytest.raises(ApiError) as date:
            await client.get_escalation("esc_1")
    assert seconds.value.retry_after_s == 7
    assert 50 < date.value.retry_after_s <= 60


async def test_create_with_idempotency_key_retries_5xx_with_the_same_key_and_body(serve):
    peer = Peer(problem(503), problem(500), created())
    url = await serve(peer)
    async with EscalatedClient(url, "ain_live_x", retry_backoff_s=0.01) as client:
        escalation = await client.create_escalation(**CREATE, idempotency_key="thread-1:review")
    assert escalation == {"id": "esc_1", "status": "open"}
    assert len(peer.requests) == 3
    assert {r[2]["Idempotency-Key"] for r in peer.requests} == {"thread-1:review"}
    assert len({r[3] for r in peer.requests}) == 1


async def test_create_without_idempotency_key_is_never_retried(serve):
    peer = Peer(problem(503), created())
    url = await serve(peer)
    async with EscalatedClient(url, "ain_live_x", retry_backoff_s=0.01) as client:
        with pytest.raises(ApiError) as caught:
            await client.create_escalation(**CREATE)
    assert caught.value.status == 503
    assert len(peer.requests) == 1


async def test_create_does_not_retry_a_client_error(serve):
    peer = Peer(problem(422), created())
    url = await serve(peer)
    async with EscalatedClient(url, "ain_live_x", retry_backoff_s=0.01) as client:
        with pytest.raises(ApiError):
            await client.create_escalation(**CREATE, idempotency_key="k")
    assert len(peer.requests) == 1


async def test_create_retries_are_bounded(serve):
    peer = Peer(*(problem(503) for _ in range(5)))
    url = await serve(peer)
    async with EscalatedClient(url, "ain_live_x", retry_backoff_s=0.01, create_attempts=3) as client:
        with pytest.raises(ApiError) as caught:
            await client.create_escalation(**CREATE, idempotency_key="k")
    assert caught.value.status == 503
    assert len(peer.requests) == 3


async def test_create_honours_retry_after_over_its_own_backoff(serve):
    # A 60 s own backoff would blow the deadline; Retry-After: 0 says "now".
    peer = Peer(problem(429, headers={"Retry-After": "0"}), created())
    url = await serve(peer)
    async with EscalatedClient(url, "ain_live_x", retry_backoff_s=60) as client:
        async with asyncio.timeout(5):
            await client.create_escalation(**CREATE, idempotency_key="k")
    assert len(peer.requests) == 2


async def test_unreachable_server_is_server_unreachable_status_0():
    async with EscalatedClient("http://127.0.0.1:9", "ain_live_x", retry_backoff_s=0.01) as client:
        with pytest.raises(ServerUnreachable) as caught:
            await client.create_escalation(**CREATE, idempotency_key="k")
    assert (caught.value.status, caught.value.code) == (0, "unreachable")
    assert isinstance(caught.value, ApiError)


async def test_requests_carry_the_bearer_token_and_camel_case_query(serve):
    peer = Peer(web.json_response({"data": [], "nextCursor": None}))
    url = await serve(peer)
    async with EscalatedClient(url + "/", "ain_live_secret") as client:
        page = await client.list_escalations(status="open", agent_id="a", run_id="r", limit=5)
    method, path_qs, hdrs, _ = peer.requests[0]
    assert page == {"data": [], "nextCursor": None}
    assert (method, path_qs) == ("GET", "/escalations?status=open&agentId=a&runId=r&limit=5")
    assert hdrs["Authorization"] == "Bearer ain_live_secret"


async def test_repr_never_shows_the_token():
    client = EscalatedClient("http://127.0.0.1:8470", "ain_live_secret")
    assert "ain_live_secret" not in repr(client)


def test_from_env_reads_url_and_key(monkeypatch):
    monkeypatch.setenv("ESCALATED_URL", "http://127.0.0.1:9999")
    monkeypatch.delenv("ESCALATED_API_KEY", raising=False)
    monkeypatch.setenv("ESCALATED_TOKEN", "ain_user_abc")
    client = EscalatedClient.from_env(timeout_s=3)
    assert (client.base_url, client._token, client.timeout_s) == ("http://127.0.0.1:9999", "ain_user_abc", 3)


def test_sse_parser_handles_comments_multiline_data_and_sticky_ids():
    parser = SseParser()
    lines = [": ping\n", "id: 7\n", "event: escalation.created\n", 'data: {"a":\n', "data: 1}\n", "\n", "data: {}\n", "\n"]
    events = [e for line in lines if (e := parser.feed(line)) is not None]
    assert events == [Event(event="escalation.created", id="7", data={"a": 1}), Event(event="message", id="7", data={})]


async def test_events_reconnects_with_last_event_id(serve):
    seen_last_ids: list[str | None] = []

    async def stream(request: web.Request) -> web.StreamResponse:
        seen_last_ids.append(request.headers.get("Last-Event-ID"))
        n = len(seen_last_ids)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        payload = json.dumps({"event": "escalation.created", "at": "t", "escalation": {"id": f"esc_{n}"}})
        await resp.write(f": ping\n\nid: {n}\nevent: escalation.created\ndata: {payload}\n\n".encode())
        return resp  # closing the stream forces the client to reconnect

    app = web.Application()
    app.router.add_get("/events", stream)
    async with await start_receiver(app) as running, EscalatedClient(running.url, "ain_live_x") as client:
        got = []
        async with asyncio.timeout(10):
            async for event in client.events(reconnect_delay_s=0.01):
                got.append(event)
                if len(got) == 3:
                    break
    assert [e.data["escalation"]["id"] for e in got] == ["esc_1", "esc_2", "esc_3"]
    assert seen_last_ids == [None, "1", "2"]


async def test_events_raises_auth_errors_instead_of_reconnecting(serve):
    peer = Peer(problem(401, body={"code": "unauthenticated", "title": "Unauthenticated"}))
    url = await serve(peer)
    async with EscalatedClient(url, "ain_live_bad") as client:
        with pytest.raises(ApiError) as caught:
            async for _ in client.events(reconnect_delay_s=0.01):
                pass
    assert caught.value.code == "unauthenticated"
    assert len(peer.requests) == 1


async def test_events_reconnects_after_a_5xx_and_stops_after_max_reconnects(serve):
    peer = Peer(problem(503), problem(502), problem(503))
    url = await serve(peer)
    async with EscalatedClient(url, "ain_live_x") as client:
        with pytest.raises(ApiError) as caught:
            async for _ in client.events(reconnect_delay_s=0.01, max_reconnects=2):
                pass
    assert caught.value.status == 503
    assert len(peer.requests) == 3
