"""Where callbacks may go (CONTRACT §5): http(s) only; loopback allowed;
link-local and metadata addresses refused unless ``--allow-callback-host``;
IPv4-mapped IPv6 judged as the IPv4 address it carries; redirects never followed.

No test here lets the server open a connection anywhere but loopback: the
refusals are checked at create time (422), and the delivery-time resolver
guard is driven directly with numeric host forms that resolve without DNS.
tests/integration/test_callbacks.py has the basic metadata and 302 cases.
"""

from __future__ import annotations

import asyncio

import pytest

from escalated.domain.urlsafety import CallbackRules
from escalated.engine import transport
from tests.security.conftest import Served, create
from tests.support.receiver import Receiver
from tests.support.api import escalation_body
from tests.support.server import start_server

REFUSED = [
    "http://169.254.169.254/latest/meta-data/",
    "https://169.254.169.254/",
    "http://169.254.1.1:8080/hook",
    "http://169.254.170.2/v2/credentials",
    "http://100.100.100.200/latest/meta-data",
    "http://[fe80::1]/hook",
    "http://[fe80::1%25eth0]:9000/hook",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[0:0:0:0:0:ffff:169.254.169.254]/",
    "http://[fd00:ec2::254]/",
    # Issue #24 point 6: the IETF protocol block, AWS's whole IPv6 metadata
    # network, and IPv6 spellings that carry a refused IPv4 address.
    "http://192.0.0.192/",
    "http://192.0.0.1:9000/hook",
    "http://[fd00:ec2::23]/",
    "http://[2002:a9fe:a9fe::]/",  # 6to4 of 169.254.169.254
    "http://[2002:a9fe:0101::1]/",  # 6to4 of 169.254.1.1 (link-local)
    "http://[2002:c000:00c0::]/",  # 6to4 of 192.0.0.192
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
    "http://[64:ff9b::169.254.169.254]/",
    "http://[2001:0:4136:e378:8000:63bf:5601:5601]/",  # Teredo, client 169.254.169.254
    "http://[::a9fe:a9fe]/",  # IPv4-compatible (deprecated)
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.google.internal./",
    "http://169.254.169.254./",
    *(f"http://{h}/" for h in ("2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518")),
    "http://0.0.0.0:9000/hook",
    "http://[::]:9000/hook",
    "ftp://127.0.0.1/hook",
    "file:///etc/passwd",
    "gopher://127.0.0.1:70/",
    "http:///hook",
    "/relative/hook",
]
ALLOWED = [
    "http://localhost:9/hook",
    "https://localhost/hook",
    "http://127.0.0.1:9/hook",
    "http://127.9.8.7:9/hook",
    "http://[::1]:9/hook",
    "http://[::ffff:127.0.0.1]:9/hook",
    "http://[::ffff:7f00:1]:9/hook",
    "http://[64:ff9b::808:808]:9/hook",  # NAT64 of a public address: judged as 8.8.8.8, no longer "not unicast"
    "http://[2002:808:808::1]:9/hook",  # 6to4 of a public address
]
# Numeric forms of 169.254.169.254 that getaddrinfo resolves without DNS.
NUMERIC_METADATA = ["2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518"]


def _create_status(served: Served, url: str) -> tuple[int, dict]:
    resp = served.http.post(
        "/escalations", token=served.key, json_body=escalation_body("sec.open", resume={"mode": "webhook", "url": url, "secret": "s"})
    )
    return resp.status, resp.json()


@pytest.mark.parametrize("url", REFUSED)
def test_link_local_metadata_and_non_http_callback_urls_are_refused_at_create(served, url):
    status, body = _create_status(served, url)
    assert status == 422, (url, body)
    assert body["code"] == "validation_failed" and body["errors"][0]["field"] == "resume.url", body


@pytest.mark.parametrize("url", ALLOWED)
def test_loopback_callback_urls_in_every_spelling_are_accepted(served, url):
    status, body = _create_status(served, url)
    assert status == 201, (url, body)


@pytest.mark.parametrize("host", NUMERIC_METADATA)
def test_numeric_spellings_of_the_metadata_address_are_refused_at_create(served, host):
    status, body = _create_status(served, f"http://{host}/hook")
    assert status == 422, (host, body)
    assert "metadata" in body["errors"][0]["message"], body


@pytest.mark.parametrize("host", NUMERIC_METADATA)
async def test_the_delivery_resolver_refuses_what_resolves_to_the_metadata_address(host):
    """The second line: the address actually resolved at delivery time is
    checked too (numeric forms resolve locally, without DNS)."""
    resolver = transport.GuardedResolver(CallbackRules())
    try:
        with pytest.raises(transport.RefusedAddress, match=r"169\.254\.169\.254"):
            await resolver.resolve(host, 80)
        assert (await resolver.resolve("localhost", 80))[0]["host"] in ("127.0.0.1", "::1")
    finally:
        await resolver.close()


def test_allow_callback_host_lets_an_operator_opt_in(tmp_path):
    proc = start_server(tmp_path, "--allow-callback-host", "169.254.169.254")
    try:
        proc.cli("policy", "set", "sec.open")
        from tests.support.http import Http

        allowed = Served(proc=proc, http=Http(proc.url), key=proc.bootstrap_key)
        assert _create_status(allowed, "http://169.254.169.254/hook")[0] == 201
        assert _create_status(allowed, "http://169.254.1.1/hook")[0] == 422  # only the named host
    finally:
        proc.stop()


@pytest.mark.parametrize(("listen", "spelling"), [("127.0.0.1", "::ffff:127.0.0.1"), ("::1", "::1"), ("127.0.0.1", "localhost")])
async def test_callbacks_reach_loopback_however_it_is_spelled(served, listen, spelling):
    receiver = await Receiver(host=listen).start()
    try:
        esc = await asyncio.to_thread(
            create, served.http, served.key, "sec.open", resume={"mode": "webhook", "url": receiver.url_on(spelling), "secret": "s"}
        )
        resp = await asyncio.to_thread(served.http.post, f"/escalations/{esc['id']}/decide", token=served.key, json_body={"choice": "approve"})
        assert resp.status == 200
        await receiver.wait_for(1)
        assert receiver.received[0].headers["x-service-event"] == "escalation.decided"
    finally:
        await receiver.stop()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_redirects_are_not_followed_and_count_as_failed_attempts(served, status):
    target = await Receiver().start()
    redirector = await Receiver(status=status, headers={"Location": target.url}).start()
    try:
        esc = await asyncio.to_thread(
            create, served.http, served.key, "sec.open", resume={"mode": "webhook", "url": redirector.url, "secret": "s"}
        )
        resp = await asyncio.to_thread(served.http.post, f"/escalations/{esc['id']}/decide", token=served.key, json_body={"choice": "approve"})
        assert resp.status == 200
        for _ in range(300):  # the attempt is recorded after the answer was read: then a followed redirect would have landed
            delivery = (await asyncio.to_thread(served.http.get, f"/escalations/{esc['id']}/deliveries", token=served.key)).json()["data"][0]
            if delivery["attempts"]:
                break
            await asyncio.sleep(0.02)
        assert delivery["attempts"][0]["statusCode"] == status, delivery
        assert delivery["status"] == "pending" and delivery["nextAttemptAt"], delivery  # failed attempt, retried later
        assert len(redirector.received) == 1
        assert target.received == []
    finally:
        await redirector.stop()
        await target.stop()
