"""The client against the real ``escalated serve`` (one server per module, for speed)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools

import pytest

from escalated.agent.client import ApiError, EscalatedClient, SyncClient
from escalated.agent.receiver import Callback, make_receiver_app, start_receiver
from tests.conftest import fresh_db
from tests.support.server import ServerProcess

POLICY = "refunds.large"
SECRET = "whsec_client_test"
_runs = itertools.count()


@pytest.fixture(scope="module")
def shared_server(request, backend, tmp_path_factory) -> ServerProcess:
    with fresh_db(request, backend, tmp_path_factory.mktemp("client")) as db:
        proc = ServerProcess(db=db).start()
        proc.cli("policy", "set", POLICY)
        yield proc
        proc.stop()


@pytest.fixture
async def client(shared_server):
    async with EscalatedClient(shared_server.url, shared_server.bootstrap_key) as c:
        yield c


def request(**overrides) -> dict:
    """A valid create request with a run id of its own."""
    return {
        "policy": POLICY,
        "agent_id": "billing-agent",
        "run_id": f"run-{next(_runs)}",
        "subject": {"type": "order", "id": "o-981", "label": "Order #981"},
        "question": "Refund 1,200 EUR?",
        "evidence": ["customer since 2019"],
        "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
        **overrides,
    }


async def test_create_returns_an_open_escalation_that_get_returns_too(client):
    created = await client.create_escalation(**request())
    assert created["id"].startswith("esc_") and created["status"] == "open"
    assert await client.get_escalation(created["id"]) == created


async def test_list_filters_by_run_id_and_pages_with_a_cursor(client):
    body = request()
    ids = [(await client.create_escalation(**body))["id"] for _ in range(3)]
    first = await client.list_escalations(run_id=body["run_id"], limit=2)
    second = await client.list_escalations(run_id=body["run_id"], limit=2, cursor=first["nextCursor"])
    assert [e["id"] for e in first["data"] + second["data"]] == ids[::-1]
    assert second["nextCursor"] is None


async def test_idempotency_key_makes_one_escalation(client):
    body = request()
    first = await client.create_escalation(**body, idempotency_key="once")
    again = await client.create_escalation(**body, idempotency_key="once")
    assert again["id"] == first["id"]
    assert len((await client.list_escalations(run_id=body["run_id"]))["data"]) == 1


async def test_idempotency_key_with_another_body_is_an_api_error(client):
    await client.create_escalation(**request(), idempotency_key="reused")
    with pytest.raises(ApiError) as caught:
        await client.create_escalation(**request(question="Something else?"), idempotency_key="reused")
    assert (caught.value.status, caught.value.code) == (422, "idempotency_key_reused")


async def test_validation_problems_arrive_with_field_paths(client):
    choices = [{"id": "same", "label": "A"}, {"id": "same", "label": "B"}]
    with pytest.raises(ApiError) as caught:
        await client.create_escalation(**request(choices=choices))
    assert (caught.value.status, caught.value.code) == (422, "validation_failed")
    assert any(e["field"].startswith("choices[1]") for e in caught.value.errors)


async def test_unknown_policy_is_its_own_code(client):
    with pytest.raises(ApiError) as caught:
        await client.create_escalation(**request(policy="no.such.policy"))
    assert caught.value.code == "unknown_policy"


async def test_acknowledge_then_decide_resolves_once(client):
    escalation_id = (await client.create_escalation(**request()))["id"]
    assert (await client.acknowledge(escalation_id))["status"] == "acknowledged"
    resolved = await client.decide(escalation_id, choice="approve", reason="fine")
    assert resolved["status"] == "resolved"
    assert resolved["resolution"]["choice"] == "approve" and resolved["resolution"]["resolvedBy"] == "human"
    with pytest.raises(ApiError) as caught:
        await client.decide(escalation_id, choice="deny")
    assert (caught.value.status, caught.value.code) == (409, "invalid_state")


async def test_cancel_records_the_reason(client):
    escalation_id = (await client.create_escalation(**request()))["id"]
    cancelled = await client.cancel(escalation_id, reason="customer withdrew")
    assert cancelled["status"] == "cancelled" and cancelled["cancellation"]["reason"] == "customer withdrew"


async def test_unknown_id_is_not_found(client):
    with pytest.raises(ApiError) as caught:
        await client.get_escalation("esc_01JD000000000000000000000")
    assert (caught.value.status, caught.value.code) == (404, "not_found")


async def test_wait_returns_as_soon_as_the_escalation_is_decided(client):
    escalation_id = (await client.create_escalation(**request()))["id"]
    waiting = asyncio.create_task(client.wait(escalation_id, timeout_s=30))
    await client.decide(escalation_id, choice="deny")
    async with asyncio.timeout(10):
        assert (await waiting)["status"] == "resolved"


async def test_wait_until_done_gives_up_at_its_timeout_with_the_open_escalation(client):
    escalation_id = (await client.create_escalation(**request()))["id"]
    async with asyncio.timeout(10):
        assert (await client.wait_until_done(escalation_id, timeout_s=1))["status"] == "open"


async def test_bad_token_is_unauthenticated(shared_server):
    async with EscalatedClient(shared_server.url, "ain_live_" + "x" * 40) as stranger:
        with pytest.raises(ApiError) as caught:
            await stranger.list_escalations()
    assert (caught.value.status, caught.value.code) == (401, "unauthenticated")


async def test_a_narrow_api_key_is_refused_what_it_lacks_and_dies_when_revoked(client, shared_server):
    issued = await client.create_api_key(name="reader", scopes=["escalations:read"])
    assert issued["key"].startswith("ain_live_") and issued["scopes"] == ["escalations:read"]
    listed = {k["id"]: k for k in await client.list_api_keys()}
    assert "key" not in listed[issued["id"]]
    async with EscalatedClient(shared_server.url, issued["key"]) as reader:
        await reader.list_escalations(limit=1)
        with pytest.raises(ApiError) as caught:
            await reader.create_escalation(**request())
        assert (caught.value.status, caught.value.code) == (403, "insufficient_scope")
        await client.revoke_api_key(issued["id"])
        with pytest.raises(ApiError) as revoked:
            await reader.list_escalations(limit=1)
    assert revoked.value.status == 401


async def test_events_stream_created_and_decided(client):
    body = request()
    connected = asyncio.Event()

    async def act() -> None:
        await connected.wait()  # an event before the subscription would be missed
        escalation_id = (await client.create_escalation(**body))["id"]
        await client.decide(escalation_id, choice="approve")

    got = []
    async with asyncio.timeout(15), contextlib.aclosing(client.events(on_connect=connected.set)) as stream:
        actor = asyncio.create_task(act())
        async for event in stream:
            if event.data["escalation"]["runId"] == body["run_id"]:
                got.append(event)
            if len(got) == 2:
                break
        await actor
    assert [e.event for e in got] == ["escalation.created", "escalation.decided"]
    assert got[1].data["escalation"]["status"] == "resolved" and got[1].id is not None


async def test_decision_is_delivered_as_a_signed_callback(client):
    received: list[Callback] = []
    arrived = asyncio.Event()

    async def handler(callback: Callback) -> None:
        received.append(callback)
        arrived.set()

    async with await start_receiver(make_receiver_app(handler, secret=SECRET)) as receiver:
        resume = {"mode": "webhook", "url": receiver.url + "/resume", "secret": SECRET}
        escalation = await client.create_escalation(**request(resume=resume))
        assert "secret" not in escalation["resume"]
        await client.decide(escalation["id"], choice="approve")
        async with asyncio.timeout(15):
            await arrived.wait()
        deliveries = await client.deliveries(escalation["id"])
    assert received[0].escalation_id == escalation["id"] and received[0].choice == "approve"
    assert received[0].event == "escalation.decided" and received[0].delivery_id == deliveries[0]["id"]
    assert deliveries[0]["kind"] == "callback"


def test_sync_client_creates_and_reads(shared_server):
    with SyncClient(shared_server.url, shared_server.bootstrap_key) as client:
        created = client.create_escalation(**request())
        assert client.get_escalation(created["id"])["status"] == "open"


async def test_a_url_that_leads_to_another_web_server_is_said_in_words():
    """``--url`` at some other server (a dev server on the port, a proxy's
    sign-in page): an ApiError ``not_escalated``, and the TUI's line says
    so, instead of a JSONDecodeError traceback."""
    from aiohttp import web

    from escalated.tui.backend import describe_error

    async def page(request: web.Request) -> web.Response:
        if request.query.get("policy") == "another.api":  # as if another JSON API answered
            return web.json_response({"data": 5, "status": "ok"})
        return web.Response(text="<html>Sign in to the proxy</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    async with await start_receiver(app) as other, EscalatedClient(other.url, "ain_live_" + "k" * 38) as client:
        with pytest.raises(ApiError) as html:
            await client.list_escalations()
        with pytest.raises(ApiError) as json_of_another_api:
            await client.list_escalations(policy="another.api")
    error = html.value
    assert (error.status, error.code) == (200, "not_escalated")
    assert "text/html that is not JSON" in error.detail and "is that URL the escalated server?" in error.detail
    assert describe_error(error, doing="loading the inbox") == "No escalated server at that URL (loading the inbox). Check --url."
    assert json_of_another_api.value.code == "not_escalated"
    assert "JSON that is not a page of escalations" in json_of_another_api.value.detail


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (b"220 mail.example ESMTP ready\r\n", "Bad status line"),  # another protocol on the port
        (b"HTTP/1.1 200 OK\r\nX-Bad: a\x00b\r\nContent-Length: 2\r\n\r\n{}", "Invalid HTTP header"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: zz\r\n\r\n{}", "Invalid character in Content-Length"),
    ],
)
async def test_an_answer_that_is_not_http_is_not_escalated_in_words(answer, reason):
    """aiohttp's ClientResponseError (an SMTP banner, a broken header) was a
    traceback from the CLI, and an unhandled error in the TUI, whose crash
    report prints the request frame's locals: the token among them."""
    from escalated.tui.backend import describe_error

    async def speak(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(answer)
        await writer.drain()
        with contextlib.suppress(ConnectionError):
            await reader.read(65536)
        writer.close()

    server = await asyncio.start_server(speak, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        async with EscalatedClient(url, "ain_live_" + "k" * 38) as client:
            with pytest.raises(ApiError) as listed:
                await client.list_escalations()
            with pytest.raises(ApiError) as streamed:
                async for _ in client.events():
                    pass
    finally:
        server.close()
        await server.wait_closed()
    for error in (listed.value, streamed.value):
        assert error.code == "not_escalated", error
        assert f"the answer is not HTTP this client can read ({reason})" in error.detail
        assert "b'" not in error.detail and "\\x00" not in error.detail
    assert describe_error(listed.value, doing="loading the inbox").startswith("No escalated server at that URL")
