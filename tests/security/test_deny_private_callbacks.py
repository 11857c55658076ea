"""``serve --deny-private-callbacks`` (issue #24 point 6): a shared deployment
refuses callbacks and webhooks to loopback and private addresses too, except
the hosts ``--allow-callback-host`` names; at create (422) and again at
delivery, where a name is judged by what it resolves to.

One real ``escalated serve`` per backend, allowing 127.0.0.1 only, so a real
receiver there proves the exception works while ``localhost`` (the same
receiver by name) is refused. Nothing here connects anywhere but loopback.
"""

from __future__ import annotations

import asyncio

import pytest

from escalated.domain.urlsafety import CallbackRules
from escalated.engine import transport
from tests.conftest import fresh_db
from tests.security.conftest import Served, create
from tests.support.receiver import Receiver
from tests.support.http import Http
from tests.support.wait import eventually
from tests.support.api import escalation_body
from tests.support.server import ServerProcess

REFUSED = [
    "http://10.1.2.3/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.10:8080/hook",
    "http://100.64.0.1/hook",  # carrier-grade NAT
    "http://127.0.0.2:9/hook",  # loopback, but not the allowed 127.0.0.1
    "http://[::1]:9/hook",
    "http://[fd12:3456::1]/hook",
    "http://[::ffff:10.0.0.1]/hook",
    "http://[64:ff9b::a00:1]/hook",  # NAT64 of 10.0.0.1
    "http://localhost:9/hook",
    "http://api.localhost:9/hook",
    "http://169.254.169.254/",  # still refused, of course
]
ACCEPTED = ["http://127.0.0.1:9/hook", "http://8.8.8.8/hook", "http://[2606:4700::1111]/hook"]


@pytest.fixture(scope="module")
def shared(request, backend, tmp_path_factory) -> Served:
    with fresh_db(request, backend, tmp_path_factory.mktemp("deny")) as db:
        args = ("--deny-private-callbacks", "--allow-callback-host", "127.0.0.1", "--retry-schedule", "1h", "--retry-for", "2h")
        proc = ServerProcess(db=db, args=args).start()
        proc.cli("policy", "set", "sec.open")
        yield Served(proc=proc, http=Http(proc.url), key=proc.bootstrap_key)
        proc.kill()


def _create_status(served: Served, url: str, policy: str = "sec.open") -> tuple[int, dict]:
    body = escalation_body(policy, resume={"mode": "webhook", "url": url, "secret": "s"})
    resp = served.http.post("/escalations", token=served.key, json_body=body)
    return resp.status, resp.json()


@pytest.mark.parametrize("url", REFUSED)
def test_loopback_and_private_callback_urls_are_refused_at_create(shared, url):
    status, body = _create_status(shared, url)
    assert status == 422, (url, body)
    assert body["errors"][0]["field"] == "resume.url", body


@pytest.mark.parametrize("url", ACCEPTED)
def test_public_and_allowed_callback_urls_are_accepted(shared, url):
    status, body = _create_status(shared, url)
    assert status == 201, (url, body)


async def test_at_delivery_a_webhook_to_loopback_by_name_is_refused_and_the_allowed_address_delivered(shared):
    """``policy set`` cannot know serve's flags, so the webhook target is
    stored; the sender refuses it at delivery, for good, and the receiver
    hears nothing by that name, while a callback to the allowed 127.0.0.1
    reaches the same receiver."""
    receiver = await Receiver().start()
    try:
        await asyncio.to_thread(shared.proc.cli, "policy", "set", "deny.hook", "--notify", f"webhook:{receiver.url_on('localhost')}")
        esc = await asyncio.to_thread(create, shared.http, shared.key, "deny.hook", resume={"mode": "webhook", "url": receiver.url, "secret": "s"})

        def notification_failed():
            data = shared.http.get(f"/escalations/{esc['id']}/deliveries", token=shared.key).json()["data"]
            return next((d for d in data if d["kind"] == "notification" and d["status"] == "failed"), None)

        failed = await asyncio.to_thread(eventually, notification_failed, what="the webhook refused")
        assert "refused" in failed["attempts"][0]["error"] and "loopback" in failed["attempts"][0]["error"], failed
        assert receiver.received == []
        resp = await asyncio.to_thread(shared.http.post, f"/escalations/{esc['id']}/decide", token=shared.key, json_body={"choice": "approve"})
        assert resp.status == 200
        await receiver.wait_for(1)
        assert receiver.received[0].headers["x-service-event"] == "escalation.decided"
    finally:
        await receiver.stop()


async def test_the_delivery_resolver_refuses_names_that_resolve_to_loopback_unless_allowed():
    """What a name resolves to is judged at delivery (DNS could point a public
    name at a private address after create)."""
    refusing = transport.GuardedResolver(CallbackRules(deny_private=True))
    allowing = transport.GuardedResolver(CallbackRules(allowed=("localhost",), deny_private=True))
    try:
        with pytest.raises(transport.RefusedAddress, match=r"localhost resolves to .*loopback"):
            await refusing.resolve("localhost", 80)
        assert (await allowing.resolve("localhost", 80))[0]["host"] in ("127.0.0.1", "::1")
    finally:
        await refusing.close()
        await allowing.close()
