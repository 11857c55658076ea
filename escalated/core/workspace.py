"""A workspace's policies and users, for its admins (the web app's admin pages).

The same rules as the CLI: a policy is built by ``build_policy`` (what
``policy set`` uses) and refused when a reviewer matches no user unless the
admin says so on purpose; tokens and sign-in links are minted here and only
their hashes stored. Every method needs an ``admin`` user (or an API key).
"""

from __future__ import annotations

import attrs

from escalated.core.admin import AdminService
from escalated.core.websessions import WebSessions
from escalated.domain import tokens
from escalated.domain.contacts import checked_contacts
from escalated.domain.models import ApiKeyInfo, Policy, Principal, UserInfo
from escalated.domain.policies import build_policy, unknown_reviewers
from escalated.domain.scopes import ALL_SCOPES, ROLES
from escalated.errors import ConfigError, InsufficientScope, NotFound
from escalated.store.base import Store
from escalated.timeutil import now_ms, parse_duration_s


@attrs.frozen
class PolicyRequest:
    """A policy as an admin asks for it, before validation (strings as typed)."""

    key: str
    reviewers: tuple[str, ...] = ()
    notify: tuple[str, ...] = ()
    sla: str | None = None
    default_choice: str | None = None
    cancel_callback: bool = False
    allow_unknown_reviewers: bool = False


def require_admin(principal: Principal) -> None:
    if principal.kind == "user" and principal.role != "admin":
        raise InsufficientScope("only admins manage policies and users")


class WorkspaceAdmin:
    def __init__(self, store: Store, *, sessions: WebSessions, admin: AdminService) -> None:
        self.store = store
        self._sessions = sessions
        self._admin = admin

    async def policies(self, principal: Principal) -> list[Policy]:
        require_admin(principal)
        return await self.store.policies(workspace_id=principal.workspace_id)

    async def set_policy(self, principal: Principal, request: PolicyRequest) -> Policy:
        """Create or replace; ``ConfigError`` in the CLI's words when it is not valid."""
        require_admin(principal)
        built = build_policy(
            principal.workspace_id,
            request.key,
            reviewers=request.reviewers,
            notify=request.notify,
            sla=request.sla,
            default_choice=request.default_choice,
            cancel_callback=request.cancel_callback,
        )
        # Users are never deleted, so a check that passes here still holds at the write.
        users = await self.store.users(workspace_id=principal.workspace_id)
        if (unknown := unknown_reviewers(built.reviewers, users)) and not request.allow_unknown_reviewers:
            raise ConfigError(
                f"policy {built.key}: no user or group matches {', '.join(unknown)}; add them first,"
                " or tick 'save anyway' (its escalations would reach no one until then)"
            )
        await self.store.put_policy(policy=built)
        return built

    async def delete_policy(self, principal: Principal, key: str) -> None:
        require_admin(principal)
        if not await self.store.delete_policy(workspace_id=principal.workspace_id, key=key):
            raise NotFound(f"no policy {key!r}")

    async def users(self, principal: Principal) -> list[UserInfo]:
        require_admin(principal)
        return await self.store.users(workspace_id=principal.workspace_id)

    async def add_user(
        self,
        principal: Principal,
        name: str,
        *,
        role: str,
        groups: tuple[str, ...],
        email: str | None = None,
        slack_id: str | None = None,
    ) -> str:
        """The new user's token, shown this once."""
        require_admin(principal)
        name = name.strip()
        if not name or "," in name or name.startswith("group:") or role not in ROLES:
            raise ConfigError("a user needs a name (no commas, not group:…) and a role: " + " or ".join(ROLES))
        email, slack_id = checked_contacts(email=email, slack_id=slack_id)
        secret = tokens.mint(tokens.USER_TOKEN_PREFIX)
        await self.store.add_user(
            workspace_id=principal.workspace_id, name=name, role=role, groups=groups, token_hash=tokens.hash_token(secret),
            email=email, slack_id=slack_id,
        )  # fmt: skip
        return secret

    async def rotate_token(self, principal: Principal, name: str) -> str:
        """A new token for ``name``; the old one, and every web session it started, end at once."""
        require_admin(principal)
        secret = tokens.mint(tokens.USER_TOKEN_PREFIX)
        await self.store.rotate_user_token(workspace_id=principal.workspace_id, name=name, token_hash=tokens.hash_token(secret))
        return secret

    async def login_link(self, principal: Principal, name: str, *, ttl: str) -> str:
        """A single-use sign-in secret for ``name`` (the caller makes it a URL)."""
        require_admin(principal)
        ttl_s = parse_duration_s(ttl)
        return await self._sessions.add_login_link(principal.workspace_id, name, ttl_s=ttl_s, at_ms=now_ms())

    # -- API keys (the rules of POST /api-keys: never more power than the caller) --

    async def api_keys(self, principal: Principal) -> list[ApiKeyInfo]:
        require_admin(principal)
        return await self._admin.list_keys(principal)

    async def issue_key(
        self, principal: Principal, *, name: str | None, scopes: frozenset[str], expires_in: str | None
    ) -> tuple[str, ApiKeyInfo]:
        """A new key (its secret returned this once) with at most the caller's scopes."""
        require_admin(principal)
        if not scopes or not scopes <= frozenset(ALL_SCOPES):
            raise ConfigError("choose at least one scope")
        requested_ms = now_ms() + int(parse_duration_s(expires_in) * 1000) if expires_in else None
        return await self._admin.issue_key(principal, name=name, scopes=scopes, expires_ms=requested_ms)

    async def revoke_key(self, principal: Principal, key_id: str) -> None:
        require_admin(principal)
        await self._admin.revoke_key(principal, key_id)
