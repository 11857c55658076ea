"""The store seam: everything the core asks of a database, and nothing else.

``Service`` and ``AdminService`` (escalated/core/) are its only callers.
Methods take and return domain objects, keyword-only. ``SqlStore``
(sqlstore.py) implements it once, over a connector per dialect
(connector.py): ``SqliteStore`` (sqlite/) and ``PostgresStore``
(postgres/). Each dialect keeps its SQL in its named-query file
(``store/sql/<dialect>.sql``); rows become objects in ``store/rows.py``.

What every implementation owes, beyond the signatures:

- A write method returns only after the COMMIT that holds it (a 201 means
  committed); concurrent writes may share one transaction (group commit),
  but one failing write never undoes another.
- Transitions are compare-and-set on ``status`` in the write transaction;
  the loser raises ``InvalidState`` (``resolve_many`` skips it instead).
- A delivery owed by a change is written in the same transaction as it.
- ``policy``, ``api_key_by_hash`` and ``user_by_hash`` are read on every
  request and must see a change made by another process at once; a
  shared store may keep them per process only within a stated bound
  (PostgreSQL: 1 s, forgotten at once on the process that made the change).
  ``kept_policy``, ``kept_api_key`` and ``kept_no_rules`` answer from what
  is kept so, without waiting; they may always answer "not known".
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from escalated.domain.models import (
    ApiKeyInfo,
    Approval,
    Attempt,
    Cancellation,
    DecisionLink,
    Delivery,
    Escalation,
    NewDecisionLink,
    Policy,
    Resolution,
    UserInfo,
    Workspace,
)
from escalated.domain.records import Change, IdempotencyRecord, ListQuery, Replay
from escalated.domain.review import Nudge
from escalated.domain.rules import Rule

# (escalation id, resolution, history event, callback owed or None)
Resolve = tuple[str, Resolution, str, Delivery | None]


class Store(abc.ABC):
    # True when several processes share the database (PostgreSQL): the bus
    # is then fed by ``follow``, and the sender and the clock coordinate
    # through ``claim_deliveries`` and ``lead``. SQLite has one process.
    shared = False

    # -- escalations: writes --------------------------------------------------

    @abc.abstractmethod
    def create_escalation(
        self,
        *,
        escalation: Escalation,
        routes: tuple[str, ...],
        notifications: list[Delivery],
        idempotency: IdempotencyRecord | None,
        not_before_ms: int,
        content_json: bytes | dict[str, Any] | None,
    ) -> Awaitable[Replay | None]:
        """Insert it with its routes, history and notifications; with an
        Idempotency-Key already used since ``not_before_ms``, insert nothing
        and return the earlier answer. ``content_json``: its content as
        stored, encoded (``content_bytes``) or as a dict, or None to
        convert ``escalation.content`` here."""

    @abc.abstractmethod
    async def acknowledge(self, *, escalation_id: str, by: str, at_ms: int) -> bool:
        """Open → acknowledged; False when it already was, ``InvalidState`` once it ended."""

    @abc.abstractmethod
    async def resolve(
        self, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
    ) -> None:
        """Open/acknowledged → resolved, with its callback."""

    @abc.abstractmethod
    async def resolve_many(self, *, items: list[Resolve]) -> list[str]:
        """Resolve each in order in one transaction, skipping those already
        ended; the ids resolved."""

    @abc.abstractmethod
    async def cancel(self, *, escalation_id: str, cancellation: Cancellation, callback: Delivery | None) -> None:
        """Open/acknowledged → cancelled, with its callback if one is owed."""

    # -- reviewer operations (CONTRACT §15) --------------------------------------

    @abc.abstractmethod
    async def assign(
        self, *, escalation_id: str, assignee: str | None, by: str, event: str, acknowledge: bool, at_ms: int
    ) -> bool:
        """Set a live escalation's assignee, with history ``event`` by ``by``;
        ``acknowledge`` (a claim) also acknowledges it if open. True when this
        acknowledged it; ``InvalidState`` once it ended."""

    @abc.abstractmethod
    async def add_rule(self, *, rule: Rule) -> None: ...

    @abc.abstractmethod
    async def rules(self, *, workspace_id: str) -> list[Rule]:
        """Every rule of the workspace, revoked and expired ones too, newest first, with their uses."""

    @abc.abstractmethod
    async def rule(self, *, rule_id: str, workspace_id: str) -> Rule | None: ...

    @abc.abstractmethod
    async def active_rules(self, *, workspace_id: str, policy: str, at_ms: int) -> list[Rule]:
        """Unrevoked, unexpired rules of a policy, newest first (without their uses): read on every create."""

    @abc.abstractmethod
    def kept_no_rules(self, *, workspace_id: str, policy: str, at_ms: int) -> bool:
        """True when what is kept now, without a read, says ``active_rules``
        would answer none; False when it would answer some, or is not known."""

    @abc.abstractmethod
    async def unanswered_by_rules(self, *, since_ms: int, before_ms: int, limit: int) -> list[tuple[int, str]]:
        """(created_ms, id) of live escalations created in [since, before] while
        an unrevoked rule of their policy (and agent, if it names one) was
        active, oldest first: what a process that stopped between a create's
        commit and its rule's decision left waiting."""

    @abc.abstractmethod
    async def revoke_rule(self, *, rule_id: str, workspace_id: str, by: str, at_ms: int) -> bool:
        """False when it was revoked already."""

    @abc.abstractmethod
    async def resolve_by_rule(
        self, *, escalation_id: str, resolution: Resolution, callback: Delivery | None, rule_id: str
    ) -> None:
        """``resolve`` (history event ``decided``) and the rule's use, in one transaction."""

    # -- reminders, escalation levels, quorum (CONTRACT §15) ---------------------

    @abc.abstractmethod
    async def approve(
        self, *, escalation_id: str, approval: Approval, quorum: int, resolution: Resolution, callback: Delivery | None
    ) -> tuple[Approval, ...]:
        """Add a quorum vote to a live escalation and, when it is the
        ``quorum``-th for its choice, resolve it with ``resolution`` and its
        callback in the same transaction; the votes as committed with it
        (resolved when ``quorum`` of them are for its choice). Votes of one escalation are
        serialised: two last votes at once resolve it once. ``AlreadyApproved``
        for a user's second vote; ``InvalidState`` once it has ended."""

    @abc.abstractmethod
    async def nudge_many(self, *, items: list[Nudge]) -> list[str]:
        """Write each reminder/level (routes, history, notifications) whose
        escalation is still open with ``nudge_ms == expected_ms``; the ids written."""

    @abc.abstractmethod
    async def nudges_until(self, *, until_ms: int, limit: int) -> list[str]:
        """Ids of open escalations whose ``nudge_ms`` is at most ``until_ms``, earliest first."""

    @abc.abstractmethod
    async def next_nudge(self) -> int | None:
        """The earliest ``nudge_ms`` of an open escalation (None: none)."""

    # -- escalations: reads ---------------------------------------------------

    @abc.abstractmethod
    async def find_replay(self, *, workspace_id: str, key: str, not_before_ms: int) -> Replay | None: ...

    @abc.abstractmethod
    async def get_escalation(
        self, *, escalation_id: str, workspace_id: str | None, routes: tuple[str, ...] | None
    ) -> Escalation | None:
        """None when absent, in another workspace or not routed to ``routes``;
        ``workspace_id=None`` and ``routes=None`` see everything."""

    @abc.abstractmethod
    async def get_escalations(self, *, escalation_ids: list[str]) -> list[Escalation]:
        """Across workspaces, in no particular order (the system's batch paths)."""

    @abc.abstractmethod
    async def list_escalations(self, *, query: ListQuery) -> tuple[list[Escalation], str | None]:
        """A page in id order and the cursor of the next page (None at the end)."""

    @abc.abstractmethod
    async def count_by_status(self, *, workspace_id: str, routes: tuple[str, ...] | None) -> dict[str, int]:
        """How many escalations of each status, of those routed to ``routes`` (None: all)."""

    @abc.abstractmethod
    async def deadlines_between(self, *, after_ms: int | None, until_ms: int, limit: int) -> list[tuple[int, str]]:
        """(deadline_ms, id) of live escalations due in (after, until], oldest first."""

    # -- the outbox -------------------------------------------------------------

    @abc.abstractmethod
    async def count_pending_deliveries(self) -> int:
        """How many deliveries wait for an attempt, on every replica's behalf."""

    @abc.abstractmethod
    async def pending_deliveries(self, *, limit: int, exclude: set[str]) -> list[Delivery]:
        """Pending deliveries in due order, skipping ``exclude``."""

    @abc.abstractmethod
    async def deliveries_of(self, *, escalation_id: str) -> list[Delivery]:
        """The callback first, then notifications, each in creation order."""

    @abc.abstractmethod
    async def record_attempt(
        self, *, delivery_id: str, attempt: Attempt, status: str, next_attempt_ms: int | None, token: int | None = None
    ) -> None:
        """``token``: the fencing token of the claim the attempt was made
        under; a shared store records nothing once the claim was lost."""

    @abc.abstractmethod
    async def defer_deliveries(self, *, delivery_ids: list[str], until_ms: int) -> None:
        """Pending ones among ``delivery_ids`` are not due before ``until_ms`` (not an attempt)."""

    async def claim_deliveries(self, *, delivery_ids: list[str], at_ms: int, lease_ms: int) -> dict[str, int | None]:
        """Those of ``delivery_ids`` this process may attempt now, each with a
        fencing token. One process is the only sender: all of them, no token."""
        return dict.fromkeys(delivery_ids)

    @abc.abstractmethod
    async def requeue_callback(self, *, escalation_id: str, at_ms: int) -> Delivery:
        """Queue the callback again (same id, same bytes); ``InvalidState`` if there is none."""

    # -- workspaces, keys, users, policies --------------------------------------

    @abc.abstractmethod
    async def policy(self, *, workspace_id: str, key: str) -> Policy | None: ...

    @abc.abstractmethod
    def kept_policy(self, *, workspace_id: str, key: str) -> Policy | None:
        """``policy``'s answer if it is kept now, without a read; None when no
        policy is kept (absent, or not known: ``policy`` says which)."""

    @abc.abstractmethod
    def kept_api_key(self, *, token_hash: str) -> ApiKeyInfo | None:
        """``api_key_by_hash``'s key if it is kept now, without a read; else None."""

    @abc.abstractmethod
    async def api_key_by_hash(self, *, token_hash: str) -> ApiKeyInfo | None: ...

    @abc.abstractmethod
    async def user_by_hash(self, *, token_hash: str) -> UserInfo | None: ...

    @abc.abstractmethod
    async def api_key(self, *, key_id: str, workspace_id: str) -> ApiKeyInfo | None: ...

    @abc.abstractmethod
    async def api_keys(self, *, workspace_id: str | None) -> list[ApiKeyInfo]:
        """In id order; ``workspace_id=None``: every workspace's."""

    @abc.abstractmethod
    async def add_api_key(
        self, *, workspace_id: str, token_hash: str, name: str | None, scopes: frozenset[str], expires_ms: int | None
    ) -> ApiKeyInfo:
        """Store a key by the hash of its secret (never the secret)."""

    @abc.abstractmethod
    async def add_first_api_key(
        self, *, workspace_id: str, token_hash: str, name: str, scopes: frozenset[str], before_commit: Callable[[], None]
    ) -> ApiKeyInfo | None:
        """Add the key only when the workspace has none, calling
        ``before_commit()`` in the transaction that holds it (a failure there
        stores nothing); None, without the call, when it has one. Processes
        starting together on one database add one key between them."""

    @abc.abstractmethod
    async def revoke_api_key(self, *, key_id: str, workspace_id: str | None) -> None:
        """``NotFound`` when no workspace has the key; ``workspace_id=None``: whichever has it."""

    @abc.abstractmethod
    async def workspace_by_name(self, *, name: str) -> Workspace:
        """``ConfigError`` when there is none."""

    @abc.abstractmethod
    async def workspaces(self) -> list[Workspace]:
        """By name."""

    @abc.abstractmethod
    async def create_workspace(self, *, name: str) -> Workspace:
        """``ConfigError`` when the name is taken."""

    @abc.abstractmethod
    async def put_policy(self, *, policy: Policy) -> None: ...

    @abc.abstractmethod
    async def put_policies(self, *, workspace_id: str, policies: list[Policy], prune: bool) -> list[str]:
        """Create or replace them all in one transaction; with ``prune``, delete
        the workspace's others too. The keys deleted."""

    @abc.abstractmethod
    async def policies(self, *, workspace_id: str) -> list[Policy]: ...

    @abc.abstractmethod
    async def delete_policy(self, *, workspace_id: str, key: str) -> bool:
        """False when there was none."""

    @abc.abstractmethod
    async def users(self, *, workspace_id: str) -> list[UserInfo]: ...

    @abc.abstractmethod
    async def add_user(
        self,
        *,
        workspace_id: str,
        name: str,
        role: str,
        groups: tuple[str, ...],
        token_hash: str,
        email: str | None = None,
        slack_id: str | None = None,
    ) -> UserInfo:
        """``ConfigError`` when the name, the email or the Slack id is taken
        in the workspace. ``email`` arrives lower-cased (domain/contacts.py)."""

    @abc.abstractmethod
    async def user_by_email(self, *, workspace_id: str, email: str) -> UserInfo | None:
        """The user of the workspace with this (lower-cased) address."""

    @abc.abstractmethod
    async def user_by_slack_id(self, *, workspace_id: str, slack_id: str) -> UserInfo | None:
        """The user of the workspace with this Slack member id."""

    @abc.abstractmethod
    async def rotate_user_token(self, *, workspace_id: str, name: str, token_hash: str) -> None:
        """``ConfigError`` when there is no such user."""

    # -- web sessions and sign-in links (only hashes of their secrets) ---------

    @abc.abstractmethod
    async def session_user(self, *, id_hash: str) -> tuple[UserInfo, int, int] | None:
        """A live session's user, its created_ms and its last_seen_ms; None
        once ended or its user's token was rotated. Read on every page view."""

    @abc.abstractmethod
    async def start_session(self, *, id_hash: str, user_id: str, user_token_hash: str, at_ms: int) -> None: ...

    @abc.abstractmethod
    async def touch_session(self, *, id_hash: str, at_ms: int) -> None: ...

    @abc.abstractmethod
    async def end_session(self, *, id_hash: str, at_ms: int) -> None: ...

    @abc.abstractmethod
    async def add_login_link(self, *, secret_hash: str, workspace_id: str, name: str, at_ms: int, expires_ms: int) -> None:
        """``ConfigError`` when there is no such user."""

    @abc.abstractmethod
    async def redeem_login_link(self, *, secret_hash: str, session_hash: str, at_ms: int) -> UserInfo | None:
        """Use the link once and start a session with it; None when unknown,
        used, expired or its user's token was rotated."""

    # -- email decision links (issue #16; only hashes of their secrets) ---------

    @abc.abstractmethod
    async def add_decision_links(self, *, delivery_id: str, links: list[NewDecisionLink], at_ms: int) -> None:
        """Store an email attempt's links; the unused links of the same
        delivery's earlier attempts are marked replaced in the same transaction."""

    @abc.abstractmethod
    async def decision_link(self, *, secret_hash: str) -> DecisionLink | None: ...

    @abc.abstractmethod
    async def use_decision_link(self, *, secret_hash: str, at_ms: int) -> bool:
        """Mark it used: False when it already was, was replaced, or expired by ``at_ms``."""

    # -- several processes on one database ---------------------------------------

    async def lead(self, stop: asyncio.Event, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``run()`` (the SLA clock) while this process is the one that
        may; a shared store picks one process at a time. One process: always."""
        await run()

    async def follow(self, stop: asyncio.Event, on_change: Callable[[Change], None]) -> None:
        """Hand every committed change to ``on_change`` in commit order until
        ``stop`` (shared stores only: one process publishes its own)."""
        await stop.wait()

    @abc.abstractmethod
    async def close(self) -> None: ...
