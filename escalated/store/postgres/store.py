"""The PostgreSQL store: the one store (sqlstore.py) over PostgreSQL's
connector (connector.py: the pool, the writer, the look-ups, the outage,
leading and following), with the methods not yet written once."""

from __future__ import annotations

from typing import Any

from escalated.domain.models import Approval, Attempt, Cancellation, Delivery, Escalation, Resolution
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.domain.review import Nudge
from escalated.store import queries
from escalated.store.base import Resolve
from escalated.store.postgres import jobs, review
from escalated.store.postgres.connector import PostgresConnector
from escalated.store.postgres.parts import Params
from escalated.store.postgres.reviewerops import ReviewerOpsQueries
from escalated.store.sqlstore import SqlStore

Q = queries.load("postgres")


class PostgresStore(ReviewerOpsQueries, SqlStore):
    shared = True

    def __init__(self, connector: PostgresConnector) -> None:
        super().__init__(connector)
        self._connector = connector
        self._writer = connector.writer

    @property
    def connector(self) -> PostgresConnector:
        """The replica's connections, for the tests that drive the change feed themselves."""
        return self._connector

    async def _fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return await self._connector.all(sql, params)

    async def _fetchone(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        return await self._connector.one(sql, params)

    @classmethod
    async def open(cls, url: str, *, durability: str = "full") -> PostgresStore:
        return cls(await PostgresConnector.open(url, durability=durability))

    # -- escalations: writes ----------------------------------------------------

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
        return await self._writer.submit(
            jobs.create_escalation,
            escalation=escalation, routes=routes, notifications=notifications, idempotency=idempotency,
            not_before_ms=not_before_ms, content_json=content_json,
        )  # fmt: skip

    async def acknowledge(self, *, escalation_id: str, by: str, at_ms: int) -> bool:
        return await self._writer.submit(jobs.acknowledge, escalation_id=escalation_id, by=by, at_ms=at_ms)

    async def resolve(
        self, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
    ) -> None:
        await self._writer.submit(
            jobs.resolve,
            escalation_id=escalation_id, resolution=resolution, history_event=history_event, callback=callback,
        )  # fmt: skip

    async def resolve_many(self, *, items: list[Resolve]) -> list[str]:
        return await self._writer.submit(jobs.resolve_many, items=items)

    async def cancel(self, *, escalation_id: str, cancellation: Cancellation, callback: Delivery | None) -> None:
        await self._writer.submit(jobs.cancel, escalation_id=escalation_id, cancellation=cancellation, callback=callback)

    async def approve(
        self, *, escalation_id: str, approval: Approval, quorum: int, resolution: Resolution, callback: Delivery | None
    ) -> tuple[Approval, ...]:
        return await self._writer.submit(
            review.approve,
            escalation_id=escalation_id, approval=approval, quorum=quorum, resolution=resolution, callback=callback,
        )  # fmt: skip

    async def nudge_many(self, *, items: list[Nudge]) -> list[str]:
        return await self._writer.submit(review.nudge_many, items=items)

    # -- escalations: reads -----------------------------------------------------

    # -- the outbox -------------------------------------------------------------

    async def claim_deliveries(self, *, delivery_ids: list[str], at_ms: int, lease_ms: int) -> dict[str, int | None]:
        """Those of ``delivery_ids`` this replica may send now, with their fencing tokens."""
        return await self._writer.submit(
            jobs.claim_deliveries, delivery_ids=delivery_ids, at_ms=at_ms, lease_ms=lease_ms
        )

    async def record_attempt(
        self, *, delivery_id: str, attempt: Attempt, status: str, next_attempt_ms: int | None, token: int | None = None
    ) -> None:
        await self._writer.submit(
            jobs.record_attempt,
            delivery_id=delivery_id, token=token, attempt=attempt, status=status, next_attempt_ms=next_attempt_ms,
        )  # fmt: skip

    async def defer_deliveries(self, *, delivery_ids: list[str], until_ms: int) -> None:
        await self._writer.submit(jobs.defer_deliveries, delivery_ids=delivery_ids, until_ms=until_ms)

    async def requeue_callback(self, *, escalation_id: str, at_ms: int) -> Delivery:
        return await self._writer.submit(jobs.requeue_callback, escalation_id=escalation_id, at_ms=at_ms)
