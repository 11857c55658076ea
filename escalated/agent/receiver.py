"""The agent's side of a callback: verify, parse, hand over once.

``callback_route(handler, secret=...)`` is an aiohttp handler for the POST
the server sends to ``resume.url`` (CONTRACT §5). It reads the raw body
bytes and verifies ``x-service-signature`` over exactly those bytes before
anything else: a bad or missing signature answers 401 and user code never
runs. A verified callback becomes a frozen ``Callback`` and is awaited by
the user's handler; success answers 200 ``{"ok": true}``. An
``escalation.cancelled`` callback becomes a ``Cancelled`` instead (see
``escalated.agent.outcome``), handed to ``on_cancel`` if given.

Delivery is at least once, so the same delivery can arrive again. The
handler is **not called twice** for a delivery id it already handled
successfully (remembered in a bounded in-memory LRU, ``SeenDeliveries``):
the repeat is answered 200 ``{"ok": true, "duplicate": true}``. If the
handler raises, the receiver answers 500 and does not remember the id, so
the server's retry gets another chance.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from aiohttp import web

from escalated.agent import signing
from escalated.agent.outcome import Callback, Cancelled, Outcome, parse_callback

__all__ = [
    "Callback",
    "Cancelled",
    "Outcome",
    "RunningReceiver",
    "SeenDeliveries",
    "callback_route",
    "make_receiver_app",
    "start_receiver",
]

SIGNATURE_HEADER = "x-service-signature"
EVENT_HEADER = "x-service-event"
DELIVERY_HEADER = "x-service-delivery"

log = logging.getLogger(__name__)


Handler = Callable[[Any], Awaitable[Any] | Any]  # called with a Callback or a Cancelled


class SeenDeliveries:
    """Delivery ids already handled, newest kept; bounded so it cannot grow forever.

    In memory only: a receiver that restarts forgets. Handlers whose effect
    must not repeat across restarts should also be idempotent themselves
    (a LangGraph resume of a thread that already finished is one such).
    """

    def __init__(self, *, max_size: int = 10_000):
        self.max_size = max_size
        self._ids: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, delivery_id: object) -> bool:
        return delivery_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, delivery_id: str) -> None:
        self._ids[delivery_id] = None
        self._ids.move_to_end(delivery_id)
        while len(self._ids) > self.max_size:
            self._ids.popitem(last=False)


def _problem(status: int, code: str, title: str, detail: str) -> web.Response:
    body = {"type": f"urn:escalated:error:{code}", "title": title, "status": status, "detail": detail, "code": code}
    return web.json_response(body, status=status, content_type="application/problem+json")


def callback_route(
    handler: Handler,
    *,
    secret: str | None,
    seen: SeenDeliveries | None = None,
    on_cancel: Handler | None = None,
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """An aiohttp handler that verifies, parses and hands a callback to ``handler``.

    ``secret=None`` accepts unsigned callbacks (for escalations created
    without ``resume.secret``); with a secret, only verified ones pass.
    An ``escalation.cancelled`` callback (policies with ``cancel_callback``)
    arrives as a ``Cancelled``: at ``on_cancel`` when given, else at
    ``handler``.
    """
    seen = SeenDeliveries() if seen is None else seen
    # Deliveries being handled right now: a concurrent repeat must not run
    # the handler a second time before the first has finished.
    in_flight: set[str] = set()

    async def route(request: web.Request) -> web.StreamResponse:
        try:
            raw = await request.read()
        except web.RequestPayloadError as exc:  # a Content-Encoding the body does not match
            return _problem(400, "invalid_callback", "Invalid callback", f"the body could not be read: {exc}")
        if secret is not None and not signing.verify(raw, request.headers.get(SIGNATURE_HEADER), secret):
            return _problem(401, "invalid_signature", "Invalid signature", "x-service-signature missing or wrong")
        delivery_id = request.headers.get(DELIVERY_HEADER)
        try:
            callback = parse_callback(raw, event=request.headers.get(EVENT_HEADER), delivery_id=delivery_id)
        except ValueError as exc:
            return _problem(400, "invalid_callback", "Invalid callback", str(exc))
        if delivery_id is not None and delivery_id in seen:
            return web.json_response({"ok": True, "duplicate": True})
        if delivery_id is not None and delivery_id in in_flight:
            # Not a failure of ours: ask the server to come back once the first copy is done.
            return _problem(409, "delivery_in_progress", "Delivery in progress", delivery_id)
        target = on_cancel if isinstance(callback, Cancelled) and on_cancel is not None else handler
        return await _handle(target, callback, seen=seen, in_flight=in_flight)

    return route


async def _handle(
    handler: Handler, callback: Outcome, *, seen: SeenDeliveries, in_flight: set[str]
) -> web.StreamResponse:
    delivery_id = callback.delivery_id
    if delivery_id is not None:
        in_flight.add(delivery_id)
    try:
        result = handler(callback)
        if inspect.isawaitable(result):
            await result
    except asyncio.CancelledError:
        raise
    except Exception:
        # The server retries a non-2xx answer; the traceback stays in our log, not in the body.
        log.exception("callback handler failed for %s (delivery %s)", callback.escalation_id, delivery_id)
        return _problem(500, "handler_failed", "Handler failed", "the callback handler raised")
    finally:
        if delivery_id is not None:
            in_flight.discard(delivery_id)
    if delivery_id is not None:
        seen.add(delivery_id)
    return web.json_response({"ok": True})


def make_receiver_app(
    handler: Handler,
    *,
    secret: str | None,
    path: str = "/resume",
    seen: SeenDeliveries | None = None,
    on_cancel: Handler | None = None,
) -> web.Application:
    """A ready aiohttp app with ``POST path`` wired to ``callback_route``."""
    app = web.Application()
    app.router.add_post(path, callback_route(handler, secret=secret, seen=seen, on_cancel=on_cancel))
    return app


@attrs.define
class RunningReceiver:
    """A receiver app listening on a real port; ``url`` is its base URL."""

    url: str
    _runner: web.AppRunner

    async def close(self) -> None:
        await self._runner.cleanup()

    async def __aenter__(self) -> RunningReceiver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


async def start_receiver(app: web.Application, *, host: str = "127.0.0.1", port: int = 0) -> RunningReceiver:
    """Serve ``app`` inside the current event loop (port 0 picks a free one)."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_port = runner.addresses[0][1]
    return RunningReceiver(url=f"http://{host}:{bound_port}", runner=runner)
