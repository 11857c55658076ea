"""``/app/events``: the bus's changes for the signed-in user, as Server-Sent Events.

The API's ``/events`` takes a bearer token; a browser page has only its
session cookie, so the web app has this stream of its own. It carries no
escalation content, only which escalation changed and how: the page then
fetches itself again, through the same routing as every other page.
"""

from __future__ import annotations

import asyncio
import contextlib

import orjson
from aiohttp import web

from escalated.core.visibility import Visibility
from escalated.http.appkeys import SERVICE, WEB_SESSIONS
from escalated.web import session

PING_S = 15.0


async def events(request: web.Request) -> web.StreamResponse:
    who = await session.signed_in(request)
    service = request.config_dict[SERVICE]
    sessions, cookie = request.config_dict[WEB_SESSIONS], request.cookies.get(session.SESSION_COOKIE)
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    )
    visibility = Visibility(service, who.principal)
    queue = service.bus.stream()
    try:
        await response.prepare(request)
        await response.write(b": connected\n\n")
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), PING_S)
            except TimeoutError:
                event = None
            if await sessions.signed_in(cookie) is None:
                break  # signed out, timed out or token rotated since the stream opened
            if event is None:
                await response.write(b": ping\n\n")
                continue
            if not await visibility.sees(event.escalation):
                continue
            data = orjson.dumps({"id": event.escalation.id, "event": event.event, "status": event.escalation.status})
            await response.write(b"event: change\ndata: %s\n\n" % data)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        service.bus.close_stream(queue)
        with contextlib.suppress(Exception):
            await response.write_eof()
    return response


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/events", events, allow_head=False)
