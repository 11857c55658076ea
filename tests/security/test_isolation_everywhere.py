"""Another workspace's tokens and unrouted reviewers get 404 on every id route,
and see nothing on ``/events``.

The get/acknowledge/decide/cancel cases for API keys are also in
tests/integration/test_auth_isolation.py; this adds wait, deliveries and
deliveries/retry, user tokens of the other workspace, both an open and a
resolved escalation, "nothing changed" afterwards, and the SSE stream.
The 5×5 scope matrix is tests/integration/test_auth_scopes.py.
"""

from __future__ import annotations

import asyncio
import socket
import time

import aiohttp
import orjson
import pytest

from tests.security.conftest import Served, cli_all, create
from tests.support.wait import eventually
from tests.support.api import unique

ID_ROUTES = {
    "get": ("GET", "/escalations/{id}", None),
    "wait": ("GET", "/escalations/{id}/wait?timeout=5", None),
    "deliveries": ("GET", "/escalations/{id}/deliveries", None),
    "deliveries/retry": ("POST", "/escalations/{id}/deliveries/retry", None),
    "acknowledge": ("POST", "/escalations/{id}/acknowledge", None),
    "decide": ("POST", "/escalations/{id}/decide", {"choice": "approve"}),
    "cancel": ("POST", "/escalations/{id}/cancel", {"reason": "x"}),
}


@pytest.fixture(scope="module")
def world(served: Served):
    """Workspace default: policy ``sec.routed`` (reviewer alice), users alice and carol,
    one open escalation and one resolved one whose callback has had its first
    (refused) attempt; the next is an hour away, so nothing moves by itself.
    Workspace B: an all-scope key and an admin user also called alice."""
    proc, http = served.proc, served.http
    ws_b = unique("wsb")
    alice, carol, _ = cli_all(
        proc,
        ("users", "add", "alice"),
        ("users", "add", "carol", "--group", "finance"),
        ("workspaces", "create", ws_b),
    )
    proc.cli("policy", "set", "sec.routed", "--reviewer", "alice")  # a reviewer must exist first
    _, other_key, other_admin = cli_all(
        proc,
        ("policy", "set", "sec.routed", "--workspace", ws_b),
        ("keys", "create", "--workspace", ws_b),
        ("users", "add", "alice", "--workspace", ws_b, "--role", "admin"),
    )
    tokens = {"alice": alice, "carol": carol, "other-key": other_key, "other-admin": other_admin}
    open_esc = create(http, served.key, "sec.routed")
    done_esc = create(http, served.key, "sec.routed", resume={"mode": "webhook", "url": refused_url(), "secret": "s3cr3t-x"})
    assert http.post(f"/escalations/{done_esc['id']}/decide", token=served.key, json_body={"choice": "deny"}).status == 200
    eventually(lambda: _callback(http, served.key, done_esc["id"])["attempts"], what="the first attempt")
    return {"tokens": tokens, "open": open_esc["id"], "resolved": done_esc["id"]}


def refused_url() -> str:
    """A loopback port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


def _callback(http, key: str, esc_id: str) -> dict:
    resp = http.get(f"/escalations/{esc_id}/deliveries", token=key)
    assert resp.status == 200, resp.body
    return resp.json()["data"][0]


@pytest.mark.parametrize("which", ["open", "resolved"])
@pytest.mark.parametrize("route", list(ID_ROUTES))
@pytest.mark.parametrize("who", ["other-key", "other-admin", "carol"])
def test_foreign_or_unrouted_token_gets_404_on_every_id_route_and_changes_nothing(served, world, who, route, which):
    http, esc_id = served.http, world[which]
    before = http.get(f"/escalations/{esc_id}", token=served.key).json()
    before_delivery = _callback(http, served.key, esc_id) if which == "resolved" else None
    method, path, body = ID_ROUTES[route]
    started = time.monotonic()
    resp = http.request(method, path.format(id=esc_id), token=world["tokens"][who], json_body=body)
    resp.problem(404, "not_found")
    assert time.monotonic() - started < 2.0  # wait answers 404 at once, it does not wait first
    assert http.get(f"/escalations/{esc_id}", token=served.key).json() == before
    if before_delivery is not None:
        assert _callback(http, served.key, esc_id) == before_delivery  # retry queued nothing


@pytest.mark.parametrize("route", ["get", "wait", "deliveries"])
def test_the_routed_reviewer_reaches_the_same_routes(served, world, route):
    """The control: the ids are right, only the token differs."""
    method, path, body = ID_ROUTES[route]
    resp = served.http.request(method, path.format(id=world["resolved"]), token=world["tokens"]["alice"], json_body=body)
    assert resp.status == 200, resp.body


def test_unrouted_and_foreign_tokens_list_nothing_of_it(served, world):
    for who in ("carol", "other-key", "other-admin"):
        listed = served.http.get("/escalations?limit=200", token=world["tokens"][who]).json()["data"]
        assert not {world["open"], world["resolved"]} & {e["id"] for e in listed}, who
    listed = served.http.get("/escalations?limit=200", token=world["tokens"]["alice"]).json()["data"]
    assert {world["open"], world["resolved"]} <= {e["id"] for e in listed}


class Stream:
    """An ``/events`` subscriber collecting (event, escalation id)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str) -> None:
        self.events: list[tuple[str, str]] = []
        self._session, self._url, self._token = session, url, token
        self.connected = asyncio.Event()
        self.task: asyncio.Task | None = None

    async def _run(self) -> None:
        async with self._session.get(self._url + "/events", headers={"Authorization": f"Bearer {self._token}"}) as resp:
            assert resp.status == 200
            event = None
            async for raw in resp.content:
                line = raw.decode().rstrip("\n")
                if line.startswith(": connected"):
                    self.connected.set()
                elif line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    self.events.append((event, orjson.loads(line[6:])["escalation"]["id"]))

    async def start(self) -> Stream:
        self.task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.connected.wait(), 10)
        return self

    async def until(self, item: tuple[str, str], *, timeout_s: float = 10.0) -> None:
        await eventually(lambda: item in self.events, timeout_s=timeout_s, interval_s=0.02, what=f"{item} on the stream")


async def test_events_stream_shows_nothing_to_unrouted_or_foreign_tokens(served, world):
    http, tokens = served.http, world["tokens"]
    async with aiohttp.ClientSession() as session:
        streams = {who: await Stream(session, served.proc.url, tokens[who]).start() for who in ("alice", "carol", "other-key", "other-admin")}
        try:
            esc = create(http, served.key, "sec.routed")["id"]
            assert http.post(f"/escalations/{esc}/acknowledge", token=served.key).status == 200
            assert http.post(f"/escalations/{esc}/decide", token=tokens["alice"], json_body={"choice": "approve"}).status == 200
            await streams["alice"].until(("escalation.decided", esc))
            # Sentinels each stream may see, published after; streams are ordered,
            # so once a sentinel is in, anything before it would have been too.
            everyone = create(http, served.key, "sec.open")["id"]
            foreign = create(http, tokens["other-key"], "sec.routed")["id"]
            await streams["carol"].until(("escalation.created", everyone))
            for who in ("other-key", "other-admin"):
                await streams[who].until(("escalation.created", foreign))
            assert [e for e in streams["alice"].events if e[1] == esc] == [
                ("escalation.created", esc), ("escalation.acknowledged", esc), ("escalation.decided", esc)
            ]
            for who in ("carol", "other-key", "other-admin"):
                assert not [e for e in streams[who].events if e[1] == esc], (who, streams[who].events)
            assert ("escalation.created", foreign) not in streams["alice"].events + streams["carol"].events
        finally:
            for stream in streams.values():
                stream.task.cancel()
            await asyncio.gather(*(s.task for s in streams.values()), return_exceptions=True)
