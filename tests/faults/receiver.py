"""A real callback receiver that fails on purpose, and remembers everything.

It answers 2xx only some of the time; otherwise 500/503, hangs past the
server's delivery timeout, drops the connection without an answer, or stops
listening altogether (connection refused), either in short random flaps or
in a long outage. Every request is recorded with its delivery id, its exact
body bytes, whether the signature verified, and what we answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import random
from collections import Counter

import attrs
import orjson
from aiohttp import web

from escalated.agent.signing import verify

OK = "ok"
FAILURE_MODES = ("http500", "http503", "hang", "drop")


def secret_for(run_id: str, *, master: str = "faults-master") -> str:
    """Each escalation has its own resume secret, derived from its runId, so a
    body signed with another escalation's secret does not verify."""
    return "whsec_" + hmac.new(master.encode(), run_id.encode(), hashlib.sha256).hexdigest()[:32]


@attrs.frozen
class Receipt:
    delivery_id: str | None
    event: str | None
    body: bytes
    signature_valid: bool
    answer: str  # "ok" or one of FAILURE_MODES

    @property
    def payload(self) -> dict:
        return orjson.loads(self.body)


@attrs.define
class FlakyReceiver:
    """``ok_share`` of requests get a 200; the rest fail in one of FAILURE_MODES."""

    rng: random.Random
    ok_share: float = 0.55
    hang_s: float = 1.6
    receipts: list[Receipt] = attrs.field(factory=list)
    answers: Counter = attrs.field(factory=Counter)
    refused_windows: int = 0
    port: int = 0
    _runner: web.AppRunner | None = None
    _site: web.TCPSite | None = None
    _flapper: asyncio.Task | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/resume"

    async def start(self) -> FlakyReceiver:
        app = web.Application()
        app.router.add_post("/resume", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await self.come_up()
        return self

    async def come_up(self) -> None:
        assert self._runner is not None and self._site is None
        self._site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await self._site.start()
        self.port = self._site._server.sockets[0].getsockname()[1]

    async def go_down(self) -> None:
        """Stop listening: new connections are refused until ``come_up``."""
        if self._site is not None:
            await self._site.stop()
            self._site = None
            self.refused_windows += 1

    def flap(self, *, up_s: tuple[float, float] = (0.5, 2.5), down_s: tuple[float, float] = (0.1, 0.6)) -> None:
        """Refuse connections now and then, in short random windows."""

        async def run() -> None:
            while True:
                await asyncio.sleep(self.rng.uniform(*up_s))
                if self._site is None:  # a long outage is on; leave it alone
                    continue
                await self.go_down()
                await asyncio.sleep(self.rng.uniform(*down_s))
                if self._site is None:
                    await self.come_up()

        self._flapper = asyncio.create_task(run(), name="receiver-flapper")

    async def stop_flapping(self) -> None:
        if self._flapper is not None:
            self._flapper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flapper
            self._flapper = None
        if self._site is None:
            await self.come_up()

    async def close(self) -> None:
        await self.stop_flapping()
        if self._runner is not None:
            await self._runner.cleanup()

    def _answer(self) -> str:
        if self.rng.random() < self.ok_share:
            return OK
        return self.rng.choice(FAILURE_MODES)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        try:
            run_id = orjson.loads(body)["runId"]
            valid = verify(body, request.headers.get("x-service-signature"), secret_for(run_id))
        except (orjson.JSONDecodeError, KeyError, TypeError):
            valid = False
        answer = self._answer()
        self.answers[answer] += 1
        self.receipts.append(
            Receipt(
                delivery_id=request.headers.get("x-service-delivery"),
                event=request.headers.get("x-service-event"),
                body=body,
                signature_valid=valid,
                answer=answer,
            )
        )
        if answer == OK:
            return web.json_response({"ok": True})
        if answer == "http500":
            return web.json_response({"error": "boom"}, status=500)
        if answer == "http503":
            return web.json_response({"error": "busy"}, status=503, headers={"Retry-After": "1"})
        if answer == "hang":
            await asyncio.sleep(self.hang_s)  # past the server's --delivery-timeout
            return web.json_response({"late": True})
        # "drop": close the connection without an answer.
        assert request.transport is not None
        request.transport.abort()
        raise asyncio.CancelledError
