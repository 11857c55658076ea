"""``/api-keys`` (CONTRACT §2): no call can mint or revoke more power than it has."""

from __future__ import annotations

from aiohttp import web

from escalated.domain.models import ApiKeyInfo, Principal
from escalated.domain.scopes import ALL_SCOPES
from escalated.errors import ConfigError, InsufficientScope, NotFound, ValidationFailed, field_error
from escalated.http.appkeys import SERVICE
from escalated.http.auth import principal_of
from escalated.http.body import read_json
from escalated.http.escalations import json_response
from escalated.store import admin
from escalated.timeutil import format_opt, now_ms, parse_duration_s


async def _key_manager(request: web.Request) -> Principal:
    principal = await principal_of(request)
    if principal.kind == "user" and principal.role != "admin":
        raise InsufficientScope("reviewer tokens cannot manage API keys; use an API key or an admin token")
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


def _parse_create(body: dict, principal: Principal) -> tuple[str | None, frozenset[str], int | None]:
    problems = []
    for name in sorted(set(body) - {"name", "scopes", "expiresIn"}):
        problems.append(field_error(name, "unknown field"))
    name = body.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 200):
        problems.append(field_error("name", "must be a non-empty string of at most 200 characters"))
    requested = body.get("scopes")
    scopes = principal.scopes
    if requested is not None:
        if not isinstance(requested, list) or not requested or not all(isinstance(s, str) for s in requested):
            problems.append(field_error("scopes", "must be a non-empty array of scope names"))
        else:
            for i, s in enumerate(requested):
                if s not in ALL_SCOPES:
                    problems.append(field_error(f"scopes[{i}]", "unknown scope; one of: " + ", ".join(ALL_SCOPES)))
            scopes = frozenset(requested)
    expires_ms = None
    expires_in = body.get("expiresIn")
    if expires_in is not None:
        try:
            if not isinstance(expires_in, str):
                raise ConfigError("not a string")
            expires_ms = now_ms() + int(parse_duration_s(expires_in) * 1000)
        except ConfigError:
            problems.append(field_error("expiresIn", "must be a duration like 90s, 15m, 4h, 2d or PT15M"))
    if problems:
        n = len(problems)
        raise ValidationFailed(f"{n} problem{'s' if n != 1 else ''}", errors=problems)
    return name, scopes, principal.expiry_of_minted_key(expires_ms)


async def create_key(request: web.Request) -> web.Response:
    principal = await _key_manager(request)
    body = await read_json(request, optional=True)
    name, scopes, expires_ms = _parse_create(body, principal)
    if not scopes <= principal.scopes:
        missing = ", ".join(sorted(scopes - principal.scopes))
        raise InsufficientScope(f"a key cannot grant scopes its issuer lacks: {missing}")
    secret, info = await request.app[SERVICE].db.write(
        lambda conn: admin.issue_api_key(conn, principal.workspace_id, name=name, scopes=scopes, expires_ms=expires_ms)
    )
    resource = key_resource(info)
    resource.pop("revokedAt")
    return json_response({**resource, "key": secret}, status=201, headers={"Location": f"/api-keys/{info.id}"})


async def list_keys(request: web.Request) -> web.Response:
    principal = await _key_manager(request)
    keys = await admin.workspace_api_keys(request.app[SERVICE].db, principal.workspace_id)
    return json_response({"data": [key_resource(k) for k in keys]})


async def revoke_key(request: web.Request) -> web.Response:
    principal = await _key_manager(request)
    db = request.app[SERVICE].db
    target = await admin.find_api_key_by_id(db, request.match_info["id"], principal.workspace_id)
    if target is None:
        raise NotFound(f"no API key {request.match_info['id']}")
    if not target.scopes <= principal.scopes:
        raise InsufficientScope("cannot revoke a key with scopes the caller lacks")
    if target.revoked_ms is None:
        await db.write(lambda conn: admin.revoke_api_key(conn, target.id, workspace_id=principal.workspace_id))
    return web.Response(status=204)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/api-keys", create_key)
    app.router.add_get("/api-keys", list_keys, allow_head=False)
    app.router.add_delete("/api-keys/{id}", revoke_key)
