"""The one Server-Sent Events loop: the API's ``/events`` and the web app's
``/app/events`` both stream the bus through it.

It subscribes to the bus, writes ``: connected`` once subscribed (so a
client that has read it misses nothing), a ``: ping`` comment after
``PING_S`` quiet seconds (proxies and browsers keep the stream open), and
each event the principal may see, framed by the route: the two routes
differ only in that framing, their headers, and what ends a stream early.
A client leaving or the server shutting down ends it quietly; the
subscription is always dropped. A stream waits for its next event or ping,
not for the server to stop, so shutdown ends the open streams at once
(``end_streams`` on ``on_shutdown``): aiohttp waits for running handlers
before it runs the cleanup contexts, and a quiet stream would otherwise
hold every shutdown, a test server's included, until its next ping.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from escalated.core.bus import BusEvent
from escalated.core.visibility import Visibility
from escalated.domain.models import Principal
from escalated.http.appkeys import EVENT_STREAMS, SERVICE

PING_S = 15.0
CONNECTED = b": connected\n\n"
PING = b": ping\n\n"


def frame(*, event: str, data: dict, event_id: int | None = None) -> bytes:
    """One event in the text/event-stream format (``data`` as one JSON line)."""
    head = b"" if event_id is None else b"id: %d\n" % event_id
    return head + b"event: %s\ndata: %s\n\n" % (event.encode(), orjson.dumps(data))


def track_streams(app: web.Application) -> None:
    """End ``app``'s open event streams when it shuts down."""
    streams: set[asyncio.Task[Any]] = set()
    app[EVENT_STREAMS] = streams
    app.on_shutdown.append(end_streams)


async def end_streams(app: web.Application) -> None:
    streams = app[EVENT_STREAMS]
    for task in list(streams):
        task.cancel()


async def _open() -> bool:
    return True


async def stream_events(
    request: web.Request,
    *,
    principal: Principal,
    render: Callable[[BusEvent], bytes],
    cache_control: str,
    still_open: Callable[[], Awaitable[bool]] = _open,
) -> web.StreamResponse:
    """Stream the bus's events ``principal`` may see, each as ``render`` frames it.

    ``still_open`` is asked at each wake-up (an event or a ping) before
    anything is written: False ends the stream without writing.
    """
    service = request.config_dict[SERVICE]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": cache_control, "X-Accel-Buffering": "no"}
    )
    visibility = Visibility(service, principal)
    queue = service.bus.stream()  # before ": connected": nothing after it is missed
    streams: set[asyncio.Task[Any]] = request.config_dict.get(EVENT_STREAMS, set())
    task = asyncio.current_task()
    if task is not None:
        streams.add(task)
    try:
        await response.prepare(request)
        await response.write(CONNECTED)
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), PING_S)
            except TimeoutError:
                event = None
            if not await still_open():
                break
            if event is None:
                await response.write(PING)
            elif await visibility.sees(event.escalation):
                await response.write(render(event))
    except (ConnectionResetError, asyncio.CancelledError):
        pass  # the client left, or the server is shutting down
    finally:
        streams.discard(task)
        service.bus.close_stream(queue)
        with contextlib.suppress(Exception):
            await response.write_eof()
    return response
