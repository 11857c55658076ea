"""``GET /me`` (CONTRACT §14): who the bearer token is and what it may do,
for any valid token and without a scope, so that a client (the MCP server)
can offer only what the token allows."""

from __future__ import annotations

from aiohttp import web

from escalated.domain.models import Principal
from escalated.http.appkeys import ADMIN
from escalated.http.auth import principal_of
from escalated.http.escalations import json_response


def me_resource(principal: Principal, *, workspace: str) -> dict:
    return {
        "kind": principal.kind,
        # An unnamed key is its id, as in answeredBy's key:<name or id>.
        "name": principal.name or principal.id,
        "workspace": workspace,
        "scopes": sorted(principal.scopes),
    }


async def me(request: web.Request) -> web.Response:
    principal = await principal_of(request)
    workspace = await request.app[ADMIN].workspace_of(principal)
    return json_response(me_resource(principal, workspace=workspace.name))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/me", me, allow_head=False)
