"""Test set-up through a running app's ``AdminService`` (escalated/core/admin.py),
on either backend: workspaces, keys, users and policies as the CLI makes
them (as the operator of a workspace), never through a store's own functions.
"""

from __future__ import annotations

from aiohttp import web

from escalated.core.admin import PolicyRequest
from escalated.domain.scopes import ALL_SCOPES
from escalated.http.appkeys import ADMIN


async def add_workspace(app: web.Application, name: str) -> None:
    await app[ADMIN].create_workspace(name=name)


async def add_key(
    app: web.Application, *, workspace: str = "default", name: str | None = None,
    scopes: frozenset[str] = frozenset(ALL_SCOPES), expires_ms: int | None = None,
) -> str:  # fmt: skip
    """A new API key's secret."""
    admin = app[ADMIN]
    principal = await admin.operator(workspace=workspace)
    secret, _ = await admin.issue_key(principal, name=name, scopes=scopes, expires_ms=expires_ms)
    return secret


async def add_user(
    app: web.Application, name: str, *, workspace: str = "default", role: str = "reviewer", groups: tuple[str, ...] = (),
    email: str | None = None,
) -> str:  # fmt: skip
    """A new user's token."""
    admin = app[ADMIN]
    return await admin.add_user(await admin.operator(workspace=workspace), name=name, role=role, groups=groups, email=email)


async def set_policy(app: web.Application, request: PolicyRequest, *, workspace: str = "default") -> None:
    admin = app[ADMIN]
    await admin.set_policy(await admin.operator(workspace=workspace), request=request)
