"""The app factory: the JSON API (escalated.http) and the browser app
(escalated.web) on one aiohttp application, over one Service.

It sits above both so neither imports the other's wiring. Background work
(SLA clock, sender) runs in ``cleanup_ctx`` so it starts and stops with the
server, and a crash of one stops the rest. Every part reads the time from
``settings.clock`` (the wall clock unless a test passes its own)."""

from __future__ import annotations

from aiohttp import web

from escalated.http import apikeys, escalations, me, meta, reviewerops, slack, streams
from escalated.core.admin import AdminService
from escalated.core.decisionlinks import DecisionLinks
from escalated.core.service import Service
from escalated.core.stores import open_store
from escalated.core.websessions import WebSessions
from escalated.http.appkeys import (
    ADMIN,
    DECISION_LINKS,
    METRICS,
    RATE_LIMITER,
    SERVICE,
    SETTINGS,
    SIGN_IN_LIMITER,
    WEB_SESSIONS,
)
from escalated.http.connections import track_requests
from escalated.http.eventstream import track_streams
from escalated.http.problems import error_middleware
from escalated.http.ratelimit import RateLimiter, SignInLimiter
from escalated.core.metrics import Metrics
from escalated.core.settings import Settings
from escalated.web import add_to as add_web_app


def create_app(settings: Settings, *, with_engine: bool = True) -> web.Application:
    app = web.Application(middlewares=[error_middleware], client_max_size=settings.max_body_bytes)
    app[SETTINGS] = settings
    app[METRICS] = Metrics()
    track_requests(app)  # the connection cap never displaces a connection inside a request
    track_streams(app)  # shutdown ends open /events streams instead of waiting for their next ping
    if settings.rate_limit_per_s:
        app[RATE_LIMITER] = RateLimiter(settings.rate_limit_per_s)
    if settings.sign_in_per_s:
        app[SIGN_IN_LIMITER] = SignInLimiter(burst=settings.sign_in_burst, per_s=settings.sign_in_per_s)
    escalations.add_routes(app)
    reviewerops.add_routes(app)
    streams.add_routes(app)
    apikeys.add_routes(app)
    meta.add_routes(app)
    me.add_routes(app)
    add_web_app(app)  # the browser app under /app/
    app.cleanup_ctx.append(_service_ctx)
    slack.add_routes(app)  # after the service's context: its helpers use the service
    if settings.mcp:
        from escalated.http import mcp  # the SDK is imported only when asked for

        mcp.add_routes(app)  # after the service's context too
    if with_engine:
        from escalated.http.lifecycle import engine_ctx

        app.cleanup_ctx.append(engine_ctx)
    return app


async def _service_ctx(app: web.Application):
    settings = app[SETTINGS]
    store = await open_store(settings)
    # From here the store is closed whatever happens: its connection threads
    # would otherwise keep a failed start-up's process alive.
    try:
        app[SERVICE] = Service(store, settings, metrics=app[METRICS])
        app[ADMIN] = AdminService(store, clock=settings.clock)
        app[WEB_SESSIONS] = WebSessions(
            store, idle_s=settings.web_idle_s, lifetime_s=settings.web_lifetime_s, clock=settings.clock
        )
        app[DECISION_LINKS] = DecisionLinks(store, service=app[SERVICE], admin=app[ADMIN], ttl_s=settings.link_ttl_s)
        yield
    finally:
        await store.close()
