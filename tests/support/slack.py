"""A local stand-in for Slack's side of an app, for tests (issue #16).

- ``SlackStandIn`` is a real HTTP server (its own thread and loop, so one
  can serve a whole test module: tests/support/threaded.py) playing
  Slack's two receiving ends: the incoming webhooks escalated posts
  messages to, and the ``response_url`` of each click, where escalated
  posts its reply. It records both.
- ``click`` sends the interaction request Slack sends when someone presses
  a button of a recorded message: ``application/x-www-form-urlencoded`` with
  one ``payload`` field holding the JSON, signed as Slack documents
  (``X-Slack-Signature: v0=`` + hex HMAC-SHA256 of
  ``v0:{X-Slack-Request-Timestamp}:{raw body}``). The signature is computed
  here from the documentation, not with escalated's code, so the two are
  checked against each other.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
from urllib.parse import urlencode

import aiohttp
import attrs
from aiohttp import web

from tests.support.threaded import ThreadedServer
from tests.support.wait import eventually

_ids = itertools.count(1)


@attrs.frozen
class Posted:
    path: str
    body: dict


def sign(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@attrs.frozen
class Interaction:
    """One interaction request as Slack would send it (body and headers)."""

    body: bytes
    headers: dict[str, str]
    response_url: str


class SlackStandIn:
    def __init__(self, signing_secret: str) -> None:
        self.signing_secret = signing_secret
        self.url = ""
        self._posts: list[Posted] = []
        self.failing: dict[str, tuple[int, int]] = {}  # path -> (posts left to refuse, with this status)
        self._lock = threading.Lock()
        self._server = ThreadedServer("slack-stand-in")

    # -- the server -------------------------------------------------------------

    def start(self) -> SlackStandIn:
        def make_app() -> web.Application:
            app = web.Application()
            app.router.add_post("/{tail:.*}", self._record)
            return app

        self.url = self._server.start(make_app)
        return self

    def stop(self) -> None:
        self._server.stop()

    async def _record(self, request: web.Request) -> web.Response:
        # Slack answers an incoming webhook with the text "ok".
        body = await request.json()
        with self._lock:
            left, status = self.failing.get(request.path, (0, 0))
            if left > 0:
                self.failing[request.path] = (left - 1, status)
                return web.Response(status=status, text="internal_error" if status >= 500 else "invalid_blocks")
            self._posts.append(Posted(path=request.path, body=body))
        return web.Response(text="ok")

    def fail_next(self, url: str, *, times: int, status: int = 500) -> None:
        """Answer the next ``times`` posts to ``url`` with ``status`` (not recorded)."""
        with self._lock:
            self.failing[url.removeprefix(self.url)] = (times, status)

    def webhook_url(self) -> str:
        """A fresh incoming-webhook URL (one per test keeps their messages apart)."""
        # Slack's own end in the secret, which masking shows the last 4 of (CONTRACT §16).
        n = next(_ids)
        return f"{self.url}/services/T0TEST/B{n:05d}/secret{n:05d}"

    def new_response_url(self) -> str:
        return f"{self.url}/actions/T0TEST/{next(_ids)}/reply"

    def posts_to(self, url: str) -> list[dict]:
        path = url.removeprefix(self.url)
        with self._lock:
            return [p.body for p in self._posts if p.path == path]

    async def wait_posts(self, url: str, count: int = 1, *, timeout_s: float = 15.0) -> list[dict]:
        """The first ``count`` bodies posted to ``url``, waiting for them up to ``timeout_s``."""
        return await eventually(
            lambda: found if len(found := self.posts_to(url)) >= count else None,
            timeout_s=timeout_s,
            interval_s=0.02,
            what=f"{count} post(s) to {url}",
        )

    # -- Slack's requests -------------------------------------------------------

    def interaction(
        self, message: dict, *, user_id: str, choice: str, timestamp: int | None = None, secret: str | None = None
    ) -> Interaction:
        """The request Slack sends when ``user_id`` presses ``choice``'s button of ``message``."""
        button = find_button(message, choice)
        response_url = self.new_response_url()
        payload = {
            "type": "block_actions",
            "user": {"id": user_id, "username": user_id.lower(), "name": user_id.lower(), "team_id": "T0TEST"},
            "api_app_id": "A0TEST",
            "token": "deprecated-verification-token",
            "container": {"type": "message", "message_ts": "1700000000.000100", "channel_id": "C0TEST"},
            "trigger_id": "1.2.3",
            "team": {"id": "T0TEST", "domain": "test"},
            "channel": {"id": "C0TEST", "name": "reviews"},
            "message": {"type": "message", "ts": "1700000000.000100", "text": message["text"], "blocks": message["blocks"]},
            "response_url": response_url,
            "actions": [
                {
                    "action_id": button["action_id"],
                    "block_id": button["block_id"],
                    "text": button["text"],
                    "value": button["value"],
                    "type": "button",
                    "action_ts": f"{time.time():.6f}",
                }
            ],
        }
        return self.signed(urlencode({"payload": json.dumps(payload)}).encode(), timestamp=timestamp, secret=secret, response_url=response_url)

    def signed(self, body: bytes, *, timestamp: int | None = None, secret: str | None = None, response_url: str = "") -> Interaction:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sign(secret or self.signing_secret, ts, body),
        }
        return Interaction(body=body, headers=headers, response_url=response_url)


def find_button(message: dict, choice: str) -> dict:
    """The button of ``message`` whose action is ``choice`` (with its block's id)."""
    for block in message["blocks"]:
        if block["type"] != "actions":
            continue
        for element in block["elements"]:
            if element["type"] == "button" and json.loads(element["value"])["choice"] == choice:
                return {**element, "block_id": block.get("block_id", "")}
    raise AssertionError(f"no button for {choice!r} in {message}")


async def send(server_url: str, request: Interaction, *, headers: dict[str, str] | None = None) -> tuple[int, dict | None]:
    """POST an interaction to the server, as Slack does; (status, problem body or None)."""
    hdrs = {**request.headers, **(headers or {})}
    hdrs = {k: v for k, v in hdrs.items() if v is not None}
    url = f"{server_url}/integrations/slack/interactions"
    async with aiohttp.ClientSession() as session, session.post(url, data=request.body, headers=hdrs) as r:
        text = await r.read()
        return r.status, json.loads(text) if text else None
