"""The core's administrative operations: who a token is, and API keys.

``AdminService`` is, with ``Service``, the only caller of the store. The
rules that keep key management safe live here, whoever asks (the HTTP API
today): no call mints or revokes more power than it has, and a minted key
never outlives the key that minted it.
"""

from __future__ import annotations

import functools

from escalated.domain import tokens
from escalated.domain.contacts import email_problem, normal_email, slack_id_problem
from escalated.domain.models import ApiKeyInfo, Principal, UserInfo
from escalated.domain.scopes import ALL_SCOPES, ROLE_SCOPES
from escalated.errors import ConfigError, InsufficientScope, NotFound, Unauthenticated, ValidationFailed, field_error
from escalated.store.base import Store
from escalated.timeutil import now_ms, parse_duration_s


class AdminService:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def principal_for(self, token: str) -> Principal:
        """The caller a bearer token stands for; ``Unauthenticated`` otherwise.

        A malformed token (bad shape or checksum) is refused without a
        database look-up. Keys and users are read on every call, so a
        revocation from the CLI applies to the very next request (across
        PostgreSQL replicas: within the store's bound of 1 s).
        """
        if not tokens.well_formed(token):
            raise Unauthenticated("malformed token")
        digest = tokens.hash_token(token)
        if token.startswith(tokens.API_KEY_PREFIX):
            key = await self.store.api_key_by_hash(token_hash=digest)
            if key is None or key.revoked_ms is not None:
                raise Unauthenticated("unknown or revoked API key")
            if key.expires_ms is not None and key.expires_ms <= now_ms():
                raise Unauthenticated("expired API key")
            return _key_principal(key)
        user = await self.store.user_by_hash(token_hash=digest)
        if user is None:
            raise Unauthenticated("unknown user token")
        return user_principal(user)

    # -- API keys -------------------------------------------------------------

    async def mint_key(self, principal: Principal, body: dict) -> tuple[str, ApiKeyInfo]:
        """A new key in the principal's workspace from a request body (``name``,
        ``scopes``, ``expiresIn``): at most the principal's scopes (all of them
        by default), never outliving it. The secret is returned this once;
        only its hash is stored."""
        require_key_manager(principal)
        name, scopes, expires_ms = parse_key_request(body, default_scopes=principal.scopes)
        return await self.issue_key(principal, name=name, scopes=scopes, expires_ms=expires_ms)

    async def issue_key(
        self, principal: Principal, *, name: str | None, scopes: frozenset[str], expires_ms: int | None
    ) -> tuple[str, ApiKeyInfo]:
        """The rules every minted key obeys, whoever asks: at most the
        principal's scopes, never outliving it (``expiry_of_minted_key``)."""
        require_key_manager(principal)
        if not scopes <= principal.scopes:
            missing = ", ".join(sorted(scopes - principal.scopes))
            raise InsufficientScope(f"a key cannot grant scopes its issuer lacks: {missing}")
        secret = tokens.mint(tokens.API_KEY_PREFIX)
        info = await self.store.add_api_key(
            workspace_id=principal.workspace_id,
            token_hash=tokens.hash_token(secret),
            name=name,
            scopes=scopes,
            expires_ms=principal.expiry_of_minted_key(expires_ms),
        )
        return secret, info

    async def list_keys(self, principal: Principal) -> list[ApiKeyInfo]:
        require_key_manager(principal)
        return await self.store.api_keys(workspace_id=principal.workspace_id)

    async def revoke_key(self, principal: Principal, key_id: str) -> None:
        """Revoke a key of the principal's workspace holding no scope the
        principal lacks; revoking a revoked key changes nothing."""
        require_key_manager(principal)
        target = await self.store.api_key(key_id=key_id, workspace_id=principal.workspace_id)
        if target is None:
            raise NotFound(f"no API key {key_id}")
        if not target.scopes <= principal.scopes:
            raise InsufficientScope("cannot revoke a key with scopes the caller lacks")
        if target.revoked_ms is None:
            await self.store.revoke_api_key(key_id=target.id, workspace_id=principal.workspace_id)


    # -- where users are reached (issue #16: email links, Slack buttons) -------

    async def user_by_email(self, *, workspace_id: str, email: str) -> UserInfo | None:
        """The workspace's user with this address, whatever its case; None for
        an address nobody has (or that is not an address)."""
        address = normal_email(email)
        if email_problem(address):
            return None
        return await self.store.user_by_email(workspace_id=workspace_id, email=address)

    async def user_by_slack_id(self, *, workspace_id: str, slack_id: str) -> UserInfo | None:
        """The workspace's user mapped to this Slack member id (``users add
        NAME --slack-id U…``); None when unmapped."""
        if slack_id_problem(slack_id):
            return None
        return await self.store.user_by_slack_id(workspace_id=workspace_id, slack_id=slack_id)

# Every request turns its key or user into a Principal; the same row gives
# the same one, so it is built once per row's contents, not per request.
@functools.lru_cache(maxsize=1024)
def _key_principal(key: ApiKeyInfo) -> Principal:
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


def require_key_manager(principal: Principal) -> None:
    """Reviewer tokens cannot manage keys. Checked by every key operation and,
    before reading a request body, by the HTTP routes (403 before 422)."""
    if principal.kind == "user" and principal.role != "admin":
        raise InsufficientScope("reviewer tokens cannot manage API keys; use an API key or an admin token")


def parse_key_request(body: dict, *, default_scopes: frozenset[str]) -> tuple[str | None, frozenset[str], int | None]:
    """(name, scopes, expires_ms) from a create-key body; every problem at once as a 422."""
    problems = [field_error(name, "unknown field") for name in sorted(set(body) - {"name", "scopes", "expiresIn"})]
    name = body.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 200):
        problems.append(field_error("name", "must be a non-empty string of at most 200 characters"))
    requested = body.get("scopes")
    scopes = default_scopes
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
    return name, scopes, expires_ms
