"""The core's administrative operations: workspaces, API keys, users, policies.

``AdminService`` is, with ``Service``, the only caller of the store, and the
one admin service of every surface: the HTTP API (keys), the web app's
admin pages and the CLI's data commands. A method acting in a workspace
takes the ``Principal`` asking: an API key, a user, or the operator (the
CLI, ``operator``). The rules hold whoever asks: no call mints or revokes
more power than it has, a minted key never outlives the key that minted
it, reviewers manage nothing, a policy whose reviewers match no user is
refused unless asked on purpose. Secrets are minted here and returned
once; only their hashes are stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from escalated.core.keyrequests import parse_key_request
from escalated.core.principals import (
    key_principal,
    operator_principal,
    require_admin,
    require_key_manager,
    user_principal,
)
from escalated.core.websessions import WebSessions
from escalated.domain import tokens
from escalated.domain.contacts import checked_contacts, email_problem, normal_email, slack_id_problem
from escalated.domain.models import DEFAULT_WORKSPACE, ApiKeyInfo, Policy, Principal, ReviewRules, UserInfo, Workspace
from escalated.domain.nul import NUL_MESSAGE, holds_control, nul_fields
from escalated.domain.policies import build_policy, unknown_reviewers
from escalated.domain.review import build_rules, parse_level
from escalated.domain.scopes import ALL_SCOPES, ROLES
from escalated.errors import ConfigError, InsufficientScope, NotFound, Unauthenticated
from escalated.store.base import Store
from escalated.timeutil import Clock, now_ms

BOOTSTRAP_KEY_NAME = "bootstrap"
MAX_KEPT_PRINCIPALS = 4096  # as many as the store keeps rows


@attrs.frozen
class PolicyRequest:
    """A policy as an admin asks for it in a form, before validation (strings as typed)."""

    key: str
    reviewers: tuple[str, ...] = ()
    notify: tuple[str, ...] = ()
    sla: str | None = None
    default_choice: str | None = None
    cancel_callback: bool = False
    allow_unknown_reviewers: bool = False
    # Reviewer operations (CONTRACT §15), as typed: levels as --level spells them.
    remind_every: str | None = None
    levels: tuple[str, ...] = ()
    quorum: str | None = None
    quorum_choices: tuple[str, ...] = ()


def review_request(request: PolicyRequest) -> ReviewRules:
    """The §15 rules of a policy request (strings as typed in a form or flags)."""
    quorum = (request.quorum or "").strip()
    if quorum and not quorum.isdigit():
        raise ConfigError(f"policy {request.key}: quorum {quorum!r} must be a whole number")
    return build_rules(
        request.key,
        remind_every=request.remind_every,
        levels=tuple(parse_level(text) for text in request.levels),
        quorum=int(quorum) if quorum else None,
        quorum_choices=request.quorum_choices,
    )


@attrs.frozen
class Unroutable:
    """A policy with reviewers (``unknown``) that match no user: they receive nothing."""

    policy: Policy
    unknown: tuple[str, ...]


@attrs.frozen
class PoliciesSaved:
    saved: tuple[Policy, ...]
    pruned: tuple[str, ...]  # keys deleted by ``prune``
    unroutable: tuple[Unroutable, ...]  # saved anyway, on purpose


class UnknownReviewers(ConfigError):
    """A policy refused because reviewers match no user; each surface says how to go on."""

    def __init__(self, *, policy: Policy, unknown: tuple[str, ...], users: list[UserInfo]) -> None:
        super().__init__(f"policy {policy.key}: no user or group matches {', '.join(unknown)}")
        self.policy, self.unknown, self.users = policy, unknown, users


class AdminService:
    def __init__(self, store: Store, *, clock: Clock = now_ms) -> None:
        self.store = store
        self.clock = clock  # epoch ms: key expiry is judged by it
        self._principals: dict[str, tuple[ApiKeyInfo, Principal]] = {}  # key id -> (its row, its principal)

    # -- who is asking ---------------------------------------------------------

    async def principal_for(self, token: str) -> Principal:
        """The caller a bearer token stands for; ``Unauthenticated`` otherwise.

        A malformed token (bad shape or checksum) is refused without a
        database look-up. The store reads keys and users again after any
        change (on SQLite), so a revocation from the CLI applies to the very
        next request (across PostgreSQL replicas: within the store's bound
        of 1 s).
        """
        digest = tokens.checked_hash(token)
        if digest is None:
            raise Unauthenticated("malformed token")
        if token.startswith(tokens.API_KEY_PREFIX):
            key = await self.store.api_key_by_hash(token_hash=digest)
            if key is None or key.revoked_ms is not None:
                raise Unauthenticated("unknown or revoked API key")
            if key.expires_ms is not None and key.expires_ms <= self.clock():
                raise Unauthenticated("expired API key")
            return self._key_principal(key)
        user = await self.store.user_by_hash(token_hash=digest)
        if user is None:
            raise Unauthenticated("unknown user token")
        return user_principal(user)

    def kept_principal(self, token: str) -> Principal | None:
        """``principal_for``'s answer for a live API key the store keeps now,
        without a read or a wait; None otherwise (``principal_for`` answers,
        or refuses the token)."""
        if not token.startswith(tokens.API_KEY_PREFIX):
            return None
        digest = tokens.checked_hash(token)
        key = None if digest is None else self.store.kept_api_key(token_hash=digest)
        if key is None or key.revoked_ms is not None or (key.expires_ms is not None and key.expires_ms <= self.clock()):
            return None
        return self._key_principal(key)

    def _key_principal(self, key: ApiKeyInfo) -> Principal:
        """The key's principal, built once per key row the store hands out
        (a row read again after a change is another object: built again)."""
        hit = self._principals.get(key.id)
        if hit is not None and hit[0] is key:
            return hit[1]
        principal = key_principal(key)
        if len(self._principals) >= MAX_KEPT_PRINCIPALS:
            self._principals.clear()
        self._principals[key.id] = (key, principal)
        return principal

    async def workspace_of(self, principal: Principal) -> Workspace:
        """The principal's own workspace (``GET /me`` names it)."""
        return next(w for w in await self.store.workspaces() if w.id == principal.workspace_id)

    async def operator(self, *, workspace: str) -> Principal:
        """The CLI in workspace ``workspace``; ``ConfigError`` when there is none."""
        return operator_principal(await self.store.workspace_by_name(name=workspace))

    # -- workspaces (the operator's: they span the database) ---------------------

    async def workspaces(self) -> list[Workspace]:
        return await self.store.workspaces()

    async def create_workspace(self, *, name: str) -> Workspace:
        refuse_nul(workspace_name=name)
        name = name.strip()
        # An empty name was created and printed as an empty line; a tab or a
        # newline in one breaks every listing and cannot be typed after -w.
        if not name or holds_control(name):
            raise ConfigError("a workspace needs a name without control characters (tab, newline…), like team-b")
        return await self.store.create_workspace(name=name)

    # -- API keys ----------------------------------------------------------------

    async def mint_key(self, principal: Principal, *, body: dict[str, Any]) -> tuple[str, ApiKeyInfo]:
        """A new key from a request body (``name``, ``scopes``, ``expiresIn``;
        a 422 lists every problem), by default with all the principal's scopes."""
        require_key_manager(principal)
        name, scopes, expires_ms = parse_key_request(body, default_scopes=principal.scopes, at_ms=self.clock())
        return await self.issue_key(principal, name=name, scopes=scopes, expires_ms=expires_ms)

    async def issue_key(
        self, principal: Principal, *, name: str | None, scopes: frozenset[str], expires_ms: int | None
    ) -> tuple[str, ApiKeyInfo]:
        """A new key in the principal's workspace (its secret returned this
        once): at most the principal's scopes, never outliving it."""
        require_key_manager(principal)
        refuse_nul(key_name=name)
        if name is not None and (not name.strip() or holds_control(name)):  # listed a line per key
            raise ConfigError("a key's name is not empty and has no control characters (tab, newline…), like --name billing-agent")
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

    async def all_keys(self) -> list[ApiKeyInfo]:
        """Every workspace's keys, in id order (the operator's listing)."""
        return await self.store.api_keys(workspace_id=None)

    async def revoke_key(self, principal: Principal, *, key_id: str) -> None:
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

    async def revoke_any_key(self, *, key_id: str) -> None:
        """The operator's revoke: whichever workspace has the key; ``NotFound`` if none."""
        await self.store.revoke_api_key(key_id=key_id, workspace_id=None)

    async def bootstrap_key(self, *, show: Callable[[str], None]) -> bool:
        """On a database's first start, a key with every scope for workspace
        default, ``show``n inside the transaction that stores it: a key is
        recorded as issued only once shown, so a start that fails first
        leaves the next start able to show one. False when one exists."""
        workspace = await self.store.workspace_by_name(name=DEFAULT_WORKSPACE)
        secret = tokens.mint(tokens.API_KEY_PREFIX)
        shown = False

        def before_commit() -> None:
            # A group run again after another job failed calls this again:
            # the same secret, so once is enough.
            nonlocal shown
            if not shown:
                show(secret)
                shown = True

        info = await self.store.add_first_api_key(
            workspace_id=workspace.id,
            token_hash=tokens.hash_token(secret),
            name=BOOTSTRAP_KEY_NAME,
            scopes=frozenset(ALL_SCOPES),
            before_commit=before_commit,
        )
        return info is not None

    # -- policies ----------------------------------------------------------------

    async def policies(self, principal: Principal) -> list[Policy]:
        require_admin(principal)
        return await self.store.policies(workspace_id=principal.workspace_id)

    async def policy(self, principal: Principal, *, key: str) -> Policy | None:
        require_admin(principal)
        return await self.store.policy(workspace_id=principal.workspace_id, key=key)

    async def set_policies(
        self, principal: Principal, *, policies: list[Policy], allow_unknown_reviewers: bool, prune: bool = False
    ) -> PoliciesSaved:
        """Create or replace them all, or none (``UnknownReviewers`` when a
        reviewer matches no user, unless allowed); with ``prune``, delete the
        workspace's others."""
        require_admin(principal)
        for policy in policies:
            level_targets = tuple(t for level in policy.review.levels for t in level.notify)
            refuse_nul(
                reviewers=_everyone_routed(policy),
                notify_targets=(*policy.notify, *level_targets),
                default_choice=policy.default_choice,
            )
        if any(p.workspace_id != principal.workspace_id for p in policies):
            raise InsufficientScope("a policy of another workspace")
        # Users are never deleted, so a check that passes here still holds at the write.
        users = await self.store.users(workspace_id=principal.workspace_id)
        unroutable = _unroutable(policies, users)
        if unroutable and not allow_unknown_reviewers:
            raise UnknownReviewers(policy=unroutable[0].policy, unknown=unroutable[0].unknown, users=users)
        pruned = await self.store.put_policies(workspace_id=principal.workspace_id, policies=policies, prune=prune)
        return PoliciesSaved(saved=tuple(policies), pruned=tuple(pruned), unroutable=tuple(unroutable))

    async def set_policy(self, principal: Principal, *, request: PolicyRequest) -> Policy:
        """A policy from a form, built by the rules ``policy set`` uses (``ConfigError`` in their words)."""
        built = build_policy(
            principal.workspace_id,
            request.key,
            reviewers=request.reviewers,
            notify=request.notify,
            sla=request.sla,
            default_choice=request.default_choice,
            cancel_callback=request.cancel_callback,
            review=review_request(request),
        )
        await self.set_policies(principal, policies=[built], allow_unknown_reviewers=request.allow_unknown_reviewers)
        return built

    async def delete_policy(self, principal: Principal, *, key: str) -> None:
        require_admin(principal)
        if not await self.store.delete_policy(workspace_id=principal.workspace_id, key=key):
            raise NotFound(f"no policy {key!r}")

    async def unroutable(self, principal: Principal) -> list[Unroutable]:
        """The workspace's policies with a reviewer that matches no user."""
        require_admin(principal)
        users = await self.store.users(workspace_id=principal.workspace_id)
        return _unroutable(await self.store.policies(workspace_id=principal.workspace_id), users)

    # -- users -------------------------------------------------------------------

    async def users(self, principal: Principal) -> list[UserInfo]:
        require_admin(principal)
        return await self.store.users(workspace_id=principal.workspace_id)

    async def add_user(
        self,
        principal: Principal,
        *,
        name: str,
        role: str,
        groups: tuple[str, ...],
        email: str | None = None,
        slack_id: str | None = None,
    ) -> str:
        """The new user's token, shown this once."""
        require_admin(principal)
        refuse_nul(user_name=name, groups=groups)
        name = name.strip()
        if not name or holds_control(name) or "," in name or name.startswith("group:") or role not in ROLES:
            raise ConfigError("a user needs a name (no commas or control characters, not group:…) and a role: " + " or ".join(ROLES))
        groups = tuple(group.strip() for group in groups)
        if any(not group or holds_control(group) or "," in group for group in groups):  # a policy's group:NAME could never name it
            raise ConfigError("a group is a name without commas or control characters, like --group finance")
        email, slack_id = checked_contacts(email=email, slack_id=slack_id)
        secret = tokens.mint(tokens.USER_TOKEN_PREFIX)
        await self.store.add_user(
            workspace_id=principal.workspace_id, name=name, role=role, groups=groups, token_hash=tokens.hash_token(secret),
            email=email, slack_id=slack_id,
        )  # fmt: skip
        return secret

    async def rotate_token(self, principal: Principal, *, name: str) -> str:
        """A new token for ``name``; the old one, and every web session it started, end at once."""
        require_admin(principal)
        refuse_nul(user_name=name)
        secret = tokens.mint(tokens.USER_TOKEN_PREFIX)
        await self.store.rotate_user_token(workspace_id=principal.workspace_id, name=name, token_hash=tokens.hash_token(secret))
        return secret

    async def login_link(self, principal: Principal, *, name: str, ttl_s: float) -> str:
        """A single-use sign-in secret for ``name`` (the caller makes it a URL)."""
        require_admin(principal)
        refuse_nul(user_name=name)
        return await WebSessions(self.store, clock=self.clock).add_login_link(principal.workspace_id, name, ttl_s=ttl_s, at_ms=self.clock())

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


def _unroutable(policies: list[Policy], users: list[UserInfo]) -> list[Unroutable]:
    found = ((p, unknown_reviewers(_everyone_routed(p), users)) for p in policies)
    return [Unroutable(policy=p, unknown=unknown) for p, unknown in found if unknown]


def _everyone_routed(policy: Policy) -> tuple[str, ...]:
    """Its reviewers and its escalation levels' (CONTRACT §15): a level's
    reviewer matching no user would reach no one when the level comes."""
    levels = (r for level in policy.review.levels for r in level.reviewers)
    return tuple(dict.fromkeys((*policy.reviewers, *levels)))


def refuse_nul(**texts: str | tuple[str, ...] | None) -> None:
    """``ConfigError`` naming the first text holding NUL (U+0000): the
    domain's rule (``domain/nul.py``), in words for the CLI and the web admin."""
    if found := nul_fields(**texts):
        raise ConfigError(f"{found[0].replace('_', ' ')} {NUL_MESSAGE}")
