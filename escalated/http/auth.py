"""Bearer tokens → Principal, and the scope check (CONTRACT §2).

Order of checks: 401 (token) before 403 (scope). A malformed token (bad
shape or checksum) is refused without a database look-up.
"""

from __future__ import annotations

import functools

from aiohttp import web

from escalated.domain import tokens
from escalated.domain.models import Principal
from escalated.domain.scopes import ROLE_SCOPES
from escalated.errors import InsufficientScope, Unauthenticated
from escalated.http.appkeys import RATE_LIMITER, SERVICE
from escalated.store import admin
from escalated.store.db import Database
from escalated.timeutil import now_ms

# Typed request storage (aiohttp >= 3.12 warns on plain string keys).
PRINCIPAL = web.RequestKey("principal", Principal) if hasattr(web, "RequestKey") else "escalated.principal"


def authenticate(db: Database, header: str | None) -> Principal:
    if not header:
        raise Unauthenticated("missing Authorization: Bearer <token>")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthenticated("use Authorization: Bearer <token>")
    if not tokens.well_formed(token):
        raise Unauthenticated("malformed token")
    digest = tokens.hash_token(token)
    if token.startswith(tokens.API_KEY_PREFIX):
        # The row is read on every request (a revocation from the CLI applies
        # to the very next one); turning it into a Principal is cached by the
        # row's exact contents.
        row = db.lookup(admin.SELECT_KEY_BY_HASH, (digest,))
        if row is None:
            raise Unauthenticated("unknown or revoked API key")
        principal, revoked_ms, expires_ms = _key_principal(row)
        if revoked_ms is not None:
            raise Unauthenticated("unknown or revoked API key")
        if expires_ms is not None and expires_ms <= now_ms():
            raise Unauthenticated("expired API key")
        return principal
    row = db.lookup(admin.SELECT_USER_BY_HASH, (digest,))
    if row is None:
        raise Unauthenticated("unknown user token")
    return _user_principal(row)


@functools.lru_cache(maxsize=1024)
def _key_principal(row: tuple) -> tuple[Principal, int | None, int | None]:
    key = admin.key_from_row(row)
    principal = Principal(
        kind="key", id=key.id, name=key.name, workspace_id=key.workspace_id, scopes=key.scopes, expires_ms=key.expires_ms
    )
    return principal, key.revoked_ms, key.expires_ms


@functools.lru_cache(maxsize=1024)
def _user_principal(row: tuple) -> Principal:
    user = admin.user_from_row(row)
    return Principal(
        kind="user",
        id=user.id,
        name=user.name,
        workspace_id=user.workspace_id,
        scopes=ROLE_SCOPES[user.role],
        groups=user.groups,
        role=user.role,
    )


async def principal_of(request: web.Request) -> Principal:
    cached = request.get(PRINCIPAL)
    if cached is not None:
        return cached
    principal = authenticate(request.app[SERVICE].db, request.headers.get("Authorization"))
    limiter = request.app.get(RATE_LIMITER)
    if limiter is not None:
        limiter.check(principal.id)
    request[PRINCIPAL] = principal
    return principal


async def require(request: web.Request, scope: str) -> Principal:
    principal = await principal_of(request)
    if scope not in principal.scopes:
        raise InsufficientScope(f"this route needs the scope {scope}", scope=scope)
    return principal

