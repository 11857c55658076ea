"""Bearer tokens → Principal (``AdminService.principal_for``), and the
scope check (CONTRACT §2). Order of checks: 401 (token) before 403 (scope).
"""

from __future__ import annotations

from aiohttp import web

from escalated.domain.models import Principal
from escalated.errors import InsufficientScope, Unauthenticated
from escalated.http.appkeys import ADMIN, RATE_LIMITER

# Typed request storage (aiohttp >= 3.12 warns on plain string keys).
PRINCIPAL = web.RequestKey("principal", Principal) if hasattr(web, "RequestKey") else "escalated.principal"


def bearer_token(header: str | None) -> str:
    if not header:
        raise Unauthenticated("missing Authorization: Bearer <token>")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthenticated("use Authorization: Bearer <token>")
    return token


async def principal_of(request: web.Request) -> Principal:
    return _known_principal(request) or await _read_principal(request)


def _known_principal(request: web.Request) -> Principal | None:
    """The caller when known without waiting: found earlier in this request,
    or an API key the store keeps (``AdminService.kept_principal``)."""
    cached = request.get(PRINCIPAL)
    if cached is not None:
        return cached
    principal = request.app[ADMIN].kept_principal(bearer_token(request.headers.get("Authorization")))
    return None if principal is None else _admitted(request, principal)


async def _read_principal(request: web.Request) -> Principal:
    principal = await request.app[ADMIN].principal_for(bearer_token(request.headers.get("Authorization")))
    return _admitted(request, principal)


def _admitted(request: web.Request, principal: Principal) -> Principal:
    limiter = request.app.get(RATE_LIMITER)
    if limiter is not None:
        limiter.check(principal.id)
    request[PRINCIPAL] = principal
    return principal


async def require(request: web.Request, scope: str) -> Principal:
    return _scoped(_known_principal(request) or await _read_principal(request), scope)


def require_known(request: web.Request, scope: str) -> Principal | None:
    """``require``'s answer when the caller is known without waiting (an API
    key the store keeps), with no coroutine: None otherwise, and the caller
    awaits ``require``. Its 401s and 403s are ``require``'s, in its order."""
    principal = _known_principal(request)
    return None if principal is None else _scoped(principal, scope)


def _scoped(principal: Principal, scope: str) -> Principal:
    if scope not in principal.scopes:
        raise InsufficientScope(f"this route needs the scope {scope}", scope=scope)
    return principal

