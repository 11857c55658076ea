"""A create whose answer is lost on the way back is retried without a second escalation.

Between the client and the real server sits a small forwarding proxy that
plays a flaky network: it passes the first create to the server and then
throws the server's answer away, answering 502 instead.
"""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web

from escalated.agent.client import ApiError, EscalatedClient
from escalated.agent.receiver import start_receiver

POLICY = "refunds.large"
REQUEST = dict(
    policy=POLICY,
    agent_id="billing-agent",
    run_id="thread-lost-answer",
    subject={"type": "order", "id": "o-1", "label": "Order #1"},
    question="Refund?",
    evidence=["customer asked"],
    choices=[{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
)


class LossyProxy:
    def __init__(self, upstream: str, *, lose: int):
        self.upstream = upstream
        self.lose = lose
        self.forwarded = 0

    async def handle(self, request: web.Request) -> web.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with (
            aiohttp.ClientSession() as session,
            session.request(request.method, self.upstream + request.path_qs, data=await request.read(), headers=headers) as resp,
        ):
            body = await resp.read()
            self.forwarded += 1
            if self.lose > 0:
                self.lose -= 1
                return web.Response(status=502, text="bad gateway")
            return web.Response(status=resp.status, body=body, content_type=resp.content_type)


async def proxied(fresh_server, *, lose: int):
    proxy = LossyProxy(fresh_server.url, lose=lose)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    return proxy, await start_receiver(app)


async def test_lost_answer_is_retried_into_the_same_escalation(fresh_server):
    fresh_server.cli("policy", "set", POLICY)
    proxy, running = await proxied(fresh_server, lose=2)
    async with running, EscalatedClient(running.url, fresh_server.bootstrap_key, retry_backoff_s=0.01) as client:
        created = await client.create_escalation(**REQUEST, idempotency_key="thread-lost-answer:review")
    async with EscalatedClient(fresh_server.url, fresh_server.bootstrap_key) as direct:
        listed = (await direct.list_escalations(run_id=REQUEST["run_id"]))["data"]
    assert proxy.forwarded == 3  # the server saw three creates...
    assert [e["id"] for e in listed] == [created["id"]]  # ...and made one escalation


async def test_without_a_key_the_lost_answer_is_an_error_not_a_retry(fresh_server):
    fresh_server.cli("policy", "set", POLICY)
    proxy, running = await proxied(fresh_server, lose=1)
    async with running, EscalatedClient(running.url, fresh_server.bootstrap_key, retry_backoff_s=0.01) as client:
        with pytest.raises(ApiError) as caught:
            await client.create_escalation(**REQUEST)
    assert caught.value.status == 502 and proxy.forwarded == 1
