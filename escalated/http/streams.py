"""Routes for waiting and watching: ``wait``, ``deliveries``, ``deliveries/retry``
and the ``/events`` Server-Sent Events stream."""

from __future__ import annotations

from aiohttp import web

from escalated.core.bus import BusEvent
from escalated.core.waiting import until_done
from escalated.domain import scopes
from escalated.domain.resource import delivery_resource, escalation_resource
from escalated.errors import ValidationFailed, field_error
from escalated.http.appkeys import SERVICE
from escalated.http.auth import require
from escalated.http.escalations import json_response
from escalated.http.eventstream import frame, stream_events
from escalated.timeutil import format_ms

MAX_WAIT_S = 60.0
DEFAULT_WAIT_S = 30.0


def _timeout_s(request: web.Request) -> float:
    given = request.query.getall("timeout", ())
    if not given:
        return DEFAULT_WAIT_S
    try:
        if len(given) > 1:
            raise ValueError  # repeated: refused rather than read as the first
        value = float(given[0])
        if not 0 <= value <= MAX_WAIT_S:
            raise ValueError
    except ValueError:
        raise ValidationFailed(
            "bad timeout", errors=[field_error("timeout", f"must be seconds from 0 to {MAX_WAIT_S:g}")]
        ) from None
    return value


async def wait(request: web.Request) -> web.Response:
    """Answer once the escalation is resolved or cancelled, or at the timeout."""
    principal = await require(request, scopes.READ)
    esc = await until_done(request.app[SERVICE], principal, request.match_info["id"], timeout_s=lambda: _timeout_s(request))
    return json_response(escalation_resource(esc))


async def deliveries(request: web.Request) -> web.Response:
    principal = await require(request, scopes.READ)
    _, items = await request.app[SERVICE].deliveries(principal, request.match_info["id"])
    return json_response({"data": [delivery_resource(d) for d in items]})


async def retry(request: web.Request) -> web.Response:
    principal = await require(request, scopes.DECIDE)
    delivery = await request.app[SERVICE].retry_delivery(principal, request.match_info["id"])
    return json_response(delivery_resource(delivery), status=202)


async def events(request: web.Request) -> web.StreamResponse:
    principal = await require(request, scopes.READ)

    def render(event: BusEvent) -> bytes:
        data = {"event": event.event, "at": format_ms(event.at_ms), "escalation": escalation_resource(event.escalation)}
        return frame(event=event.event, data=data, event_id=event.seq)

    return await stream_events(request, principal=principal, render=render, cache_control="no-cache")


def add_routes(app: web.Application) -> None:
    app.router.add_get("/escalations/{id}/wait", wait, allow_head=False)
    app.router.add_get("/escalations/{id}/deliveries", deliveries, allow_head=False)
    app.router.add_post("/escalations/{id}/deliveries/retry", retry)
    app.router.add_get("/events", events, allow_head=False)
