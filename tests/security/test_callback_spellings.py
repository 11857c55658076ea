"""Callback hosts are judged as the HTTP client will connect to them.

yarl (under aiohttp) maps Unicode spellings of a host through IDNA/NFKC:
fullwidth digits, ideographic full stops and circled digits become the
literal address, and aiohttp then skips the resolver. These tests drive a
real ``escalated serve`` and never let it connect anywhere but loopback: the
canary is a real receiver on 127.0.0.1, reached by spellings of 127.0.0.1
(must arrive) and of ``0.0.0.0`` (refused; on Linux a connection to 0.0.0.0
lands on the local host, so a miss shows up at the canary).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys

import aiohttp
import pytest

from escalated.domain.urlsafety import CallbackRules
from escalated.engine import transport
from tests.security.conftest import Served, create
from tests.support.receiver import Receiver
from tests.support.http import Http
from tests.support.wait import eventually
from tests.support.api import escalation_body
from tests.support.server import cli, start_server

FULLWIDTH = str.maketrans("0123456789.", "０１２３４５６７８９．")
CIRCLED = str.maketrans("0123456789", "⓪①②③④⑤⑥⑦⑧⑨")


def spellings(address: str) -> list[str]:
    """Unicode spellings that yarl normalises to ``address``."""
    return [
        address.translate(FULLWIDTH),  # fullwidth digits and full stops
        address.translate(FULLWIDTH).replace("．", "."),  # fullwidth digits, ASCII dots
        address.replace(".", "。"),  # ideographic full stop
        address.replace(".", "｡"),  # halfwidth ideographic full stop
        address.translate(CIRCLED),  # circled digits
        address.translate(CIRCLED).replace(".", "。"),
        "".join(chr(0x1D7CE + int(c)) if c.isdigit() else c for c in address),  # mathematical bold digits
    ]


METADATA_SPELLINGS = [
    *spellings("169.254.169.254"),
    "⑯⑨.254.169.254",
    "ｍｅｔａｄａｔａ.google.internal",
    "METADATA。google。internal。",
    "２８５２０３９１６６",  # the decimal spelling, in fullwidth digits
    "０ｘａ９ｆｅａ９ｆｅ",
]
UNOPENABLE = [
    "http://2130706433/hook",  # aiohttp refuses legacy numeric IPv4: retried for a day, never sent
    "http://127.1/hook",
    "http://0177.0.0.1/hook",
    "http://127.0.0.1%2f/hook",
    "http://exa*mple.com/hook",
    "http://[::ffff:127.0.0.1.2]/hook",
    "http://[::ffff:" + "169.254.169.254".translate(FULLWIDTH).replace("．", ".") + "]/",
]
UNSENDABLE = [
    "http://127.0.0.1:9/ho ok",
    "http://127.0.0.1:9/hook\r\nX-Injected: 1",
    "http://127.0.0.1:9/hook\n",
    "http://127.0.0.1:9/hook\t",
    "http://127.0.0.1:9/hook\u2028",
    "http://127.0.0.1:9/hook\u2029",
    "http://127.0.0.1:9/ho\u200bok",
    "http://127.0.0.1:9/hook\u00a0",
    " http://127.0.0.1:9/hook",
]


def _create(served: Served, url: str) -> tuple[int, dict]:
    body = escalation_body("sec.open", resume={"mode": "webhook", "url": url, "secret": "s"})
    resp = served.http.post("/escalations", token=served.key, json_body=body)
    return resp.status, resp.json()


@pytest.mark.parametrize("host", METADATA_SPELLINGS)
def test_unicode_spellings_of_the_metadata_address_are_refused_at_create(served, host):
    status, body = _create(served, f"http://{host}/latest/meta-data/")
    assert status == 422, (host, body)
    assert body["errors"][0]["field"] == "resume.url" and "metadata" in body["errors"][0]["message"], body


@pytest.fixture
async def canary():
    receiver = await Receiver().start()
    yield receiver
    await receiver.stop()


@pytest.mark.parametrize("host", ["0.0.0.0", *spellings("0.0.0.0")])
async def test_unicode_spellings_of_a_refused_address_are_refused_at_create_and_reach_nothing(served, canary, host):
    status, body = await asyncio.to_thread(_create, served, f"http://{host}:{canary.port}/hook")
    assert status == 422, (host, body)
    assert "not a unicast address" in body["errors"][0]["message"], body
    assert canary.received == []


@pytest.mark.parametrize("host", spellings("127.0.0.1"))
async def test_unicode_spellings_of_loopback_are_normalised_and_delivered(served, canary, host):
    esc = await asyncio.to_thread(
        create, served.http, served.key, "sec.open", resume={"mode": "webhook", "url": f"http://{host}:{canary.port}/hook", "secret": "s"}
    )
    resp = await asyncio.to_thread(served.http.post, f"/escalations/{esc['id']}/decide", token=served.key, json_body={"choice": "approve"})
    assert resp.status == 200
    await canary.wait_for(1)
    assert canary.received[0].headers["x-service-event"] == "escalation.decided"


@pytest.mark.parametrize("url", UNOPENABLE)
def test_urls_the_http_client_can_never_open_are_refused_at_create(served, url):
    status, body = _create(served, url)
    assert status == 422, (url, body)
    assert body["errors"][0]["field"] == "resume.url", body


@pytest.mark.parametrize("url", UNSENDABLE)
def test_urls_with_spaces_line_breaks_or_control_characters_are_refused_at_create(served, url):
    status, body = _create(served, url)
    assert status == 422, (url, body)
    assert "must not contain spaces" in body["errors"][0]["message"], body


@pytest.mark.parametrize("host", ["0.0.0.0", "０.０.０.０", "⓪。⓪。⓪。⓪"])
async def test_the_connect_time_guard_refuses_literal_addresses_the_resolver_never_sees(canary, host):
    """aiohttp connects to a literal address without asking the resolver; the
    sender's socket factory vets it. Allowing the host proves the canary works."""
    url = f"http://{host}:{canary.port}/hook"
    async with transport.open_session(rules=CallbackRules(), limit=2) as session:
        with pytest.raises(aiohttp.ClientConnectorError) as caught:
            await session.post(url, data=b"{}")
    assert isinstance(caught.value.os_error, transport.RefusedAddress), caught.value
    assert canary.received == []
    async with transport.open_session(rules=CallbackRules(allowed=("0.0.0.0",)), limit=2) as session, session.post(url, data=b"{}") as resp:
        assert resp.status == 200
    assert len(canary.received) == 1


async def test_a_stored_callback_to_a_unicode_spelling_is_refused_at_delivery_for_good(tmp_path, canary):
    """A row stored by an older version, whose create check read the host
    with urllib, is judged again at delivery: failed at once, nothing sent."""
    proc = await asyncio.to_thread(start_server, tmp_path, "--retry-schedule", "1h", "--retry-for", "2h")
    try:
        await asyncio.to_thread(proc.cli, "policy", "set", "sec.open")
        http = Http(proc.url)
        closed = f"http://127.0.0.1:{canary.port + 1 if canary.port < 65535 else 1}/hook"
        esc = await asyncio.to_thread(create, http, proc.bootstrap_key, "sec.open", resume={"mode": "webhook", "url": closed, "secret": "s"})
        decided = await asyncio.to_thread(http.post, f"/escalations/{esc['id']}/decide", token=proc.bootstrap_key, json_body={"choice": "approve"})
        assert decided.status == 200
        await asyncio.to_thread(proc.stop)
        with sqlite3.connect(proc.db) as conn:
            conn.execute("UPDATE deliveries SET target = ? WHERE escalation_id = ?", (f"http://０.０.０.０:{canary.port}/hook", esc["id"]))
        await asyncio.to_thread(proc.start)
        retried = await asyncio.to_thread(Http(proc.url).post, f"/escalations/{esc['id']}/deliveries/retry", token=proc.bootstrap_key)
        assert retried.status in (200, 202), retried.body

        def failed():
            resp = Http(proc.url).get(f"/escalations/{esc['id']}/deliveries", token=proc.bootstrap_key)
            delivery = resp.json()["data"][0]
            return delivery if delivery["status"] == "failed" else None

        delivery = await asyncio.to_thread(eventually, failed, what="the delivery to fail for good")
        assert "not a unicast address" in delivery["attempts"][-1]["error"], delivery
        assert canary.received == []
    finally:
        await asyncio.to_thread(proc.kill)


def test_a_unicode_spelling_of_the_metadata_address_is_refused_as_a_webhook_notification_target(tmp_path):
    env = {**os.environ, "ESCALATED_DB": str(tmp_path / "notify.db")}
    target = "webhook:http://１６９。２５４。１６９。２５４/hook"
    refused = subprocess.run(
        [sys.executable, "-m", "escalated", "policy", "set", "sec.notify", "--notify", target], env=env, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode != 0 and "169.254.169.254 is a cloud metadata address" in refused.stderr, refused
    assert "sec.notify" not in cli(tmp_path / "notify.db", "policy", "list")
