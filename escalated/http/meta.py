"""Unauthenticated routes: health, the OpenAPI document, Prometheus metrics."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from escalated.errors import DatabaseUnavailable
from escalated.http.appkeys import METRICS, SERVICE
from escalated.http.escalations import json_response
from escalated.http.openapi import openapi_document


async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "ok"})


async def openapi(request: web.Request) -> web.Response:
    return json_response(openapi_document())


async def metrics(request: web.Request) -> web.Response:
    registry = request.app[METRICS]
    try:
        registry.deliveries_pending.set(await request.app[SERVICE].count_pending_deliveries())
    except DatabaseUnavailable:
        pass  # the database is away: the last figure read stands; the rest of the metrics still answer
    body = generate_latest(registry.registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def add_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz, allow_head=False)
    app.router.add_get("/openapi.json", openapi, allow_head=False)
    app.router.add_get("/metrics", metrics, allow_head=False)
