"""``/api-keys`` (CONTRACT §2): no call can mint or revoke more power than it has."""

from __future__ import annotations

from aiohttp import web

from escalated.core.principals import require_key_manager
from escalated.domain.models import ApiKeyInfo, Principal
from escalated.http.appkeys import ADMIN
from escalated.http.auth import principal_of
from escalated.http.body import read_json
from escalated.http.escalations import json_response
from escalated.timeutil import format_opt


async def _key_manager(request: web.Request) -> Principal:
    principal = await principal_of(request)
    require_key_manager(principal)  # 403 before any body is read
    return principal


def key_resource(info: ApiKeyInfo) -> dict:
    return {
        "id": info.id,
        "name": info.name,
        "scopes": sorted(info.scopes),
        "createdAt": format_opt(info.created_ms),
        "expiresAt": format_opt(info.expires_ms),
        "revokedAt": format_opt(info.revoked_ms),
    }


async def create_key(request: web.Request) -> web.Response:
    principal = await _key_manager(request)
    body = await read_json(request, optional=True)
    secret, info = await request.app[ADMIN].mint_key(principal, body=body)
    resource = key_resource(info)
    resource.pop("revokedAt")
    return json_response({**resource, "key": secret}, status=201, headers={"Location": f"/api-keys/{info.id}"})


async def list_keys(request: web.Request) -> web.Response:
    principal = await _key_manager(request)
    keys = await request.app[ADMIN].list_keys(principal)
    return json_response({"data": [key_resource(k) for k in keys]})


async def revoke_key(request: web.Request) -> web.Response:
    principal = await _key_manager(request)
    await request.app[ADMIN].revoke_key(principal, key_id=request.match_info["id"])
    return web.Response(status=204)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/api-keys", create_key)
    app.router.add_get("/api-keys", list_keys, allow_head=False)
    app.router.add_delete("/api-keys/{id}", revoke_key)
