"""Who is asking, as a ``Principal``: an API key, a user, or the operator.

Every request turns its key or user into a Principal; the same row gives
the same one, so it is built once per row's contents, not per request.
"""

from __future__ import annotations

import functools

from escalated.domain.models import ApiKeyInfo, Principal, UserInfo, Workspace
from escalated.domain.scopes import ALL_SCOPES, ROLE_SCOPES
from escalated.errors import InsufficientScope

OPERATOR = "operator"


@functools.lru_cache(maxsize=1024)
def key_principal(key: ApiKeyInfo) -> Principal:
    return Principal(
        kind="key", id=key.id, name=key.name, workspace_id=key.workspace_id, scopes=key.scopes, expires_ms=key.expires_ms
    )


@functools.lru_cache(maxsize=1024)
def user_principal(user: UserInfo) -> Principal:
    return Principal(
        kind="user",
        id=user.id,
        name=user.name,
        workspace_id=user.workspace_id,
        scopes=ROLE_SCOPES[user.role],
        groups=user.groups,
        role=user.role,
    )


def operator_principal(workspace: Workspace) -> Principal:
    """Whoever runs the CLI on the database itself: they could edit any row,
    so within a workspace they hold every scope and an admin's role."""
    return Principal(
        kind=OPERATOR, id=OPERATOR, name=OPERATOR, workspace_id=workspace.id, scopes=frozenset(ALL_SCOPES), role="admin"
    )


def require_key_manager(principal: Principal) -> None:
    """Reviewer tokens cannot manage keys. Checked by every key operation and,
    before reading a request body, by the HTTP routes (403 before 422)."""
    if principal.kind == "user" and principal.role != "admin":
        raise InsufficientScope("reviewer tokens cannot manage API keys; use an API key or an admin token")


def require_admin(principal: Principal) -> None:
    if principal.kind == "user" and principal.role != "admin":
        raise InsufficientScope("only admins manage policies and users")
