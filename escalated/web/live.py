"""``/app/events``: the bus's changes for the signed-in user, as Server-Sent Events.

The API's ``/events`` takes a bearer token; a browser page has only its
session cookie, so the web app has this stream of its own (through the same
loop, escalated/http/eventstream.py). It carries no escalation content, only
which escalation changed and how: the page then fetches itself again,
through the same routing as every other page.
"""

from __future__ import annotations

from aiohttp import web

from escalated.core.bus import BusEvent
from escalated.http.appkeys import WEB_SESSIONS
from escalated.http.eventstream import frame, stream_events
from escalated.web import session


async def events(request: web.Request) -> web.StreamResponse:
    who = await session.signed_in(request)
    sessions, cookie = request.config_dict[WEB_SESSIONS], request.cookies.get(session.SESSION_COOKIE)

    async def still_signed_in() -> bool:
        # Signed out, timed out or token rotated since the stream opened: it ends.
        return await sessions.signed_in(cookie) is not None

    def render(event: BusEvent) -> bytes:
        return frame(event="change", data={"id": event.escalation.id, "event": event.event, "status": event.escalation.status})

    return await stream_events(
        request, principal=who.principal, render=render, cache_control="no-store", still_open=still_signed_in
    )


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/events", events, allow_head=False)
