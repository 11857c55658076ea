"""The SQLite store: ``Store`` over one file, one writer and its readers.

Writes are jobs run by the group-commit writer (db.py) on the event
loop; reads go through aiosqlite, except those looked up on every request
(policy, API key, user, the policy's active rules), which ``Database.lookup``
reads on the loop itself because a thread hop costs more than the read, and
which are kept until the database next changes (untilchanged.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from escalated.domain.models import (
    Approval,
    Attempt,
    Cancellation,
    Delivery,
    Escalation,
    Resolution,
)
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.domain.review import Nudge
from escalated.domain.rules import Rule
from escalated.store import queries
from escalated.store.sqlite import escalations, outbox, review, reviewerops
from escalated.store.sqlite.connector import SqliteConnector
from escalated.store.sqlstore import SqlStore
from escalated.store.base import Resolve
from escalated.store.sqlite.db import Database

Q = queries.load("sqlite")


class SqliteStore(SqlStore):
    def __init__(self, db: Database) -> None:
        connector = SqliteConnector(db)
        super().__init__(connector)
        self._db = db

    @classmethod
    async def open(cls, path: Path | str, *, durability: str = "full") -> SqliteStore:
        return cls(await Database.open(path, durability=durability))

    @property
    def database(self) -> Database:
        """The connections themselves, for the tests and benchmarks that measure the writer."""
        return self._db

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

    # -- the outbox -------------------------------------------------------------

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
