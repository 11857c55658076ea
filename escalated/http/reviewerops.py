"""Reviewer operations over HTTP (CONTRACT §15): claim, assign, and the
remembered decisions under ``/rules``. Handlers are thin, as in escalations.py."""

from __future__ import annotations

from aiohttp import web

from escalated.domain import scopes
from escalated.domain.resource import escalation_resource, rule_resource
from escalated.http.appkeys import SERVICE
from escalated.http.auth import require
from escalated.http.body import read_json
from escalated.http.escalations import json_response


async def claim(request: web.Request) -> web.Response:
    principal = await require(request, scopes.ACKNOWLEDGE)
    service = request.app[SERVICE]
    esc = await service.get(principal, request.match_info["id"])
    await read_json(request, optional=True)
    return json_response(escalation_resource(await service.reviewer_ops.claim(principal, esc)))


async def assign(request: web.Request) -> web.Response:
    principal = await require(request, scopes.DECIDE)
    service = request.app[SERVICE]
    esc = await service.get(principal, request.match_info["id"])
    body = await read_json(request)
    return json_response(escalation_resource(await service.reviewer_ops.assign(principal, esc, body)))


async def create_rule(request: web.Request) -> web.Response:
    principal = await require(request, scopes.DECIDE)
    body = await read_json(request)
    service = request.app[SERVICE]
    rule = await service.reviewer_ops.create_rule(principal, body)
    return json_response(rule_resource(rule, at_ms=service.clock()), status=201, headers={"Location": f"/rules/{rule.id}"})


async def list_rules(request: web.Request) -> web.Response:
    principal = await require(request, scopes.DECIDE)
    service = request.app[SERVICE]
    found = await service.reviewer_ops.rules(principal)
    at_ms = service.clock()
    return json_response({"data": [rule_resource(r, at_ms=at_ms) for r in found]})


async def get_rule(request: web.Request) -> web.Response:
    principal = await require(request, scopes.DECIDE)
    service = request.app[SERVICE]
    rule = await service.reviewer_ops.rule(principal, request.match_info["id"])
    return json_response(rule_resource(rule, at_ms=service.clock()))


async def revoke_rule(request: web.Request) -> web.Response:
    principal = await require(request, scopes.DECIDE)
    await request.app[SERVICE].reviewer_ops.revoke_rule(principal, request.match_info["id"])
    return web.Response(status=204)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/escalations/{id}/claim", claim)
    app.router.add_post("/escalations/{id}/assign", assign)
    app.router.add_post("/rules", create_rule)
    app.router.add_get("/rules", list_rules, allow_head=False)
    app.router.add_get("/rules/{id}", get_rule, allow_head=False)
    app.router.add_delete("/rules/{id}", revoke_rule)
