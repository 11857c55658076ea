"""The SQLite store: ``Store`` over one file, one writer and its readers.

Writes are jobs run by the group-commit writer (db.py) on the event
loop; reads go through aiosqlite, except those looked up on every request
(policy, API key, user, the policy's active rules), which ``Database.lookup``
reads on the loop itself because a thread hop costs more than the read, and
which are kept until the database next changes (untilchanged.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
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
from escalated.errors import ConfigError
from escalated.domain.records import IdempotencyRecord, ListQuery, Replay
from escalated.domain.review import Nudge
from escalated.domain.rules import Rule
from escalated.store import queries
from escalated.store.sqlite import decisionlinks, escalations, outbox, review, reviewerops, websessions, workspaces
from escalated.store.base import Resolve, Store
from escalated.store.sqlite.db import Database
from escalated.store.sqlite.untilchanged import UntilChanged
from escalated.store.rows import decision_link_from_row, key_from_row, policy_from_row, user_from_row, workspace_from_row

Q = queries.load("sqlite")


class SqliteStore(Store):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._kept = UntilChanged(db.data_version)

    @classmethod
    async def open(cls, path: Path | str, *, durability: str = "full") -> SqliteStore:
        return cls(await Database.open(path, durability=durability))

    @property
    def database(self) -> Database:
        """The connections themselves, for the tests and benchmarks that measure the writer."""
        return self._db

    async def close(self) -> None:
        await self._db.close()

    # -- escalations ------------------------------------------------------------

    async def create_escalation(
        self,
        *,
        escalation: Escalation,
        routes: tuple[str, ...],
        notifications: list[Delivery],
        idempotency: IdempotencyRecord | None,
        not_before_ms: int,
        content_json: dict[str, Any],
    ) -> Replay | None:
        return await self._db.write(
            escalations.create_escalation,
            escalation=escalation, routes=routes, notifications=notifications, idempotency=idempotency,
            not_before_ms=not_before_ms, content_json=content_json,
        )  # fmt: skip

    async def acknowledge(self, *, escalation_id: str, by: str, at_ms: int) -> bool:
        return await self._db.write(escalations.acknowledge, escalation_id=escalation_id, by=by, at_ms=at_ms)

    async def resolve(
        self, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
    ) -> None:
        await self._db.write(
            escalations.resolve,
            escalation_id=escalation_id, resolution=resolution, history_event=history_event, callback=callback,
        )  # fmt: skip

    async def resolve_many(self, *, items: list[Resolve]) -> list[str]:
        return await self._db.write(escalations.resolve_many, items=items)

    async def cancel(self, *, escalation_id: str, cancellation: Cancellation, callback: Delivery | None) -> None:
        await self._db.write(escalations.cancel, escalation_id=escalation_id, cancellation=cancellation, callback=callback)

    # -- reviewer operations ------------------------------------------------------

    async def assign(
        self, *, escalation_id: str, assignee: str | None, by: str, event: str, acknowledge: bool, at_ms: int
    ) -> bool:
        return await self._db.write(
            reviewerops.assign,
            escalation_id=escalation_id, assignee=assignee, by=by, event=event, acknowledge=acknowledge, at_ms=at_ms,
        )  # fmt: skip

    async def add_rule(self, *, rule: Rule) -> None:
        await self._db.write(reviewerops.add_rule, rule=rule)

    async def rules(self, *, workspace_id: str) -> list[Rule]:
        return await reviewerops.rules(self._db, workspace_id=workspace_id)

    async def rule(self, *, rule_id: str, workspace_id: str) -> Rule | None:
        return await reviewerops.rule(self._db, rule_id=rule_id, workspace_id=workspace_id)

    async def active_rules(self, *, workspace_id: str, policy: str, at_ms: int) -> list[Rule]:
        def read() -> tuple[int, list[Rule]]:
            return at_ms, reviewerops.active_rules(self._db, workspace_id=workspace_id, policy=policy, at_ms=at_ms)

        read_at_ms, rules = self._kept.get(("rules", workspace_id, policy), read)
        if at_ms < read_at_ms:  # asked about an earlier time than the kept read: it may lack rules expired since
            return reviewerops.active_rules(self._db, workspace_id=workspace_id, policy=policy, at_ms=at_ms)
        return [r for r in rules if r.expires_ms > at_ms]

    async def revoke_rule(self, *, rule_id: str, workspace_id: str, by: str, at_ms: int) -> bool:
        return await self._db.write(reviewerops.revoke_rule, rule_id=rule_id, workspace_id=workspace_id, by=by, at_ms=at_ms)

    async def resolve_by_rule(
        self, *, escalation_id: str, resolution: Resolution, callback: Delivery | None, rule_id: str
    ) -> None:
        await self._db.write(
            reviewerops.resolve_by_rule, escalation_id=escalation_id, resolution=resolution, callback=callback, rule_id=rule_id
        )

    # -- reminders, escalation levels, quorum (CONTRACT §15) ------------------------

    async def approve(
        self, *, escalation_id: str, approval: Approval, quorum: int, resolution: Resolution, callback: Delivery | None
    ) -> tuple[Approval, ...]:
        return await self._db.write(
            review.approve,
            escalation_id=escalation_id, approval=approval, quorum=quorum, resolution=resolution, callback=callback,
        )  # fmt: skip

    async def nudge_many(self, *, items: list[Nudge]) -> list[str]:
        return await self._db.write(review.nudge_many, items=items)

    async def nudges_until(self, *, until_ms: int, limit: int) -> list[str]:
        return await review.nudges_until(self._db, until_ms=until_ms, limit=limit)

    async def next_nudge(self) -> int | None:
        return await review.next_nudge(self._db)

    async def find_replay(self, *, workspace_id: str, key: str, not_before_ms: int) -> Replay | None:
        return await escalations.find_replay(self._db, workspace_id=workspace_id, key=key, not_before_ms=not_before_ms)

    async def get_escalation(
        self, *, escalation_id: str, workspace_id: str | None, routes: tuple[str, ...] | None
    ) -> Escalation | None:
        return await escalations.get_escalation(self._db, escalation_id, workspace_id=workspace_id, routes=routes)

    async def get_escalations(self, *, escalation_ids: list[str]) -> list[Escalation]:
        return await escalations.get_many(self._db, escalation_ids)

    async def list_escalations(self, *, query: ListQuery) -> tuple[list[Escalation], str | None]:
        return await escalations.list_escalations(self._db, query)

    async def count_by_status(self, *, workspace_id: str, routes: tuple[str, ...] | None) -> dict[str, int]:
        return await escalations.count_by_status(self._db, workspace_id=workspace_id, routes=routes)

    async def deadlines_between(self, *, after_ms: int | None, until_ms: int, limit: int) -> list[tuple[int, str]]:
        return await escalations.deadlines_between(self._db, after_ms=after_ms, until_ms=until_ms, limit=limit)

    # -- the outbox -------------------------------------------------------------

    async def pending_deliveries(self, *, limit: int, exclude: set[str]) -> list[Delivery]:
        return await outbox.pending_head(self._db, limit=limit, exclude=exclude)

    async def deliveries_of(self, *, escalation_id: str) -> list[Delivery]:
        return await outbox.of_escalation(self._db, escalation_id)

    async def record_attempt(
        self, *, delivery_id: str, attempt: Attempt, status: str, next_attempt_ms: int | None, token: int | None = None
    ) -> None:
        await self._db.write(
            outbox.record_attempt, delivery_id=delivery_id, attempt=attempt, status=status, next_attempt_ms=next_attempt_ms
        )

    async def defer_deliveries(self, *, delivery_ids: list[str], until_ms: int) -> None:
        await self._db.write(outbox.defer_deliveries, delivery_ids=delivery_ids, until_ms=until_ms)

    async def requeue_callback(self, *, escalation_id: str, at_ms: int) -> Delivery:
        return await self._db.write(outbox.requeue_callback, escalation_id=escalation_id, at_ms=at_ms)

    # -- workspaces, keys, users, policies --------------------------------------

    async def policy(self, *, workspace_id: str, key: str) -> Policy | None:
        def read() -> Policy | None:
            row = self._db.lookup(Q["get_policy"], (workspace_id, key))
            return None if row is None else policy_from_row(row)

        return self._kept.get(("policy", workspace_id, key), read)

    async def api_key_by_hash(self, *, token_hash: str) -> ApiKeyInfo | None:
        def read() -> ApiKeyInfo | None:
            row = self._db.lookup(Q["key_by_hash"], (token_hash,))
            return None if row is None else key_from_row(row)

        return self._kept.get(("key", token_hash), read)

    async def user_by_hash(self, *, token_hash: str) -> UserInfo | None:
        def read() -> UserInfo | None:
            row = self._db.lookup(Q["user_by_hash"], (token_hash,))
            return None if row is None else user_from_row(row)

        return self._kept.get(("user", token_hash), read)

    async def api_key(self, *, key_id: str, workspace_id: str) -> ApiKeyInfo | None:
        row = await self._db.fetchone(Q["key_by_id"], (key_id, workspace_id))
        return None if row is None else key_from_row(row)

    async def api_keys(self, *, workspace_id: str | None) -> list[ApiKeyInfo]:
        if workspace_id is None:
            return [key_from_row(r) for r in await self._db.fetchall(Q["all_keys"])]
        return [key_from_row(r) for r in await self._db.fetchall(Q["keys_of_workspace"], (workspace_id,))]

    async def add_api_key(
        self, *, workspace_id: str, token_hash: str, name: str | None, scopes: frozenset[str], expires_ms: int | None
    ) -> ApiKeyInfo:
        return await self._db.write(
            workspaces.insert_api_key,
            workspace_id=workspace_id, token_hash=token_hash, name=name, scopes=scopes, expires_ms=expires_ms,
        )  # fmt: skip

    async def add_first_api_key(
        self, *, workspace_id: str, token_hash: str, name: str, scopes: frozenset[str], before_commit: Callable[[], None]
    ) -> ApiKeyInfo | None:
        return await self._db.write(
            workspaces.insert_first_api_key,
            workspace_id=workspace_id, token_hash=token_hash, name=name, scopes=scopes, before_commit=before_commit,
        )  # fmt: skip

    async def revoke_api_key(self, *, key_id: str, workspace_id: str | None) -> None:
        await self._db.write(workspaces.revoke_api_key, key_id=key_id, workspace_id=workspace_id)

    async def workspace_by_name(self, *, name: str) -> Workspace:
        row = await self._db.fetchone(Q["workspace_by_name"], (name,))
        if row is None:
            raise ConfigError(f"no workspace named {name!r} (see: escalated workspaces list)")
        return workspace_from_row(row)

    async def workspaces(self) -> list[Workspace]:
        return [workspace_from_row(r) for r in await self._db.fetchall(Q["list_workspaces"])]

    async def create_workspace(self, *, name: str) -> Workspace:
        return await self._db.write(workspaces.create_workspace, name=name)

    async def put_policy(self, *, policy: Policy) -> None:
        await self._db.write(workspaces.upsert_policy, policy=policy)

    async def put_policies(self, *, workspace_id: str, policies: list[Policy], prune: bool) -> list[str]:
        return await self._db.write(workspaces.put_policies, workspace_id=workspace_id, policies=policies, prune=prune)

    async def policies(self, *, workspace_id: str) -> list[Policy]:
        return [policy_from_row(r) for r in await self._db.fetchall(Q["policies_of_workspace"], (workspace_id,))]

    async def delete_policy(self, *, workspace_id: str, key: str) -> bool:
        return await self._db.write(workspaces.delete_policy, workspace_id=workspace_id, key=key)

    async def users(self, *, workspace_id: str) -> list[UserInfo]:
        return [user_from_row(r) for r in await self._db.fetchall(Q["users_of_workspace"], (workspace_id,))]

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
        return await self._db.write(
            workspaces.insert_user,
            workspace_id=workspace_id, name=name, role=role, groups=groups, token_hash=token_hash,
            email=email, slack_id=slack_id,
        )  # fmt: skip

    async def user_by_email(self, *, workspace_id: str, email: str) -> UserInfo | None:
        row = await self._db.fetchone(Q["user_by_email"], (workspace_id, email))
        return None if row is None else user_from_row(row)

    async def user_by_slack_id(self, *, workspace_id: str, slack_id: str) -> UserInfo | None:
        row = await self._db.fetchone(Q["user_by_slack_id"], (workspace_id, slack_id))
        return None if row is None else user_from_row(row)

    async def rotate_user_token(self, *, workspace_id: str, name: str, token_hash: str) -> None:
        await self._db.write(workspaces.rotate_user_token, workspace_id=workspace_id, name=name, token_hash=token_hash)

    # -- web sessions and sign-in links -----------------------------------------

    async def session_user(self, *, id_hash: str) -> tuple[UserInfo, int, int] | None:
        row = self._db.lookup(Q["session_user"], (id_hash,))
        return None if row is None else (user_from_row(row[:-2]), row[-2], row[-1])

    async def start_session(self, *, id_hash: str, user_id: str, user_token_hash: str, at_ms: int) -> None:
        await self._db.write(
            websessions.start_session, id_hash=id_hash, user_id=user_id, user_token_hash=user_token_hash, at_ms=at_ms
        )

    async def touch_session(self, *, id_hash: str, at_ms: int) -> None:
        await self._db.write(websessions.touch_session, id_hash=id_hash, at_ms=at_ms)

    async def end_session(self, *, id_hash: str, at_ms: int) -> None:
        await self._db.write(websessions.end_session, id_hash=id_hash, at_ms=at_ms)

    async def add_login_link(self, *, secret_hash: str, workspace_id: str, name: str, at_ms: int, expires_ms: int) -> None:
        await self._db.write(
            websessions.insert_login_link,
            secret_hash=secret_hash, workspace_id=workspace_id, name=name, at_ms=at_ms, expires_ms=expires_ms,
        )  # fmt: skip

    async def redeem_login_link(self, *, secret_hash: str, session_hash: str, at_ms: int) -> UserInfo | None:
        return await self._db.write(
            websessions.redeem_login_link, secret_hash=secret_hash, session_hash=session_hash, at_ms=at_ms
        )

    # -- email decision links -------------------------------------------------------

    async def add_decision_links(self, *, delivery_id: str, links: list[NewDecisionLink], at_ms: int) -> None:
        await self._db.write(decisionlinks.add_links, delivery_id=delivery_id, links=links, at_ms=at_ms)

    async def decision_link(self, *, secret_hash: str) -> DecisionLink | None:
        row = await self._db.fetchone(Q["decision_link"], (secret_hash,))
        return None if row is None else decision_link_from_row(row)

    async def use_decision_link(self, *, secret_hash: str, at_ms: int) -> bool:
        return await self._db.write(decisionlinks.use_link, secret_hash=secret_hash, at_ms=at_ms)
