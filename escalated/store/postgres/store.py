"""The PostgreSQL store: the one store (sqlstore.py) over PostgreSQL's
connector (connector.py: the pool, the writer, the look-ups, the outage,
leading and following), with the methods not yet written once."""

from __future__ import annotations

from typing import Any

from escalated.domain.models import Approval, Attempt, Cancellation, Delivery, Escalation, Resolution
from escalated.domain.records import IdempotencyRecord, ListQuery, Replay
from escalated.domain.review import Nudge
from escalated.store import queries
from escalated.store.base import Resolve
from escalated.store.statements import get_statement, list_statement, page_of
from escalated.store.postgres import jobs, review
from escalated.store.postgres.connector import PostgresConnector
from escalated.store.postgres.parts import Params
from escalated.store.postgres.reviewerops import ReviewerOpsQueries
from escalated.store.rows import delivery_from_row, escalation_with_history, replay_from_row
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

    async def nudges_until(self, *, until_ms: int, limit: int) -> list[str]:
        return [r[0] for r in await self._fetchall(Q["nudges_until"], (until_ms, limit))]

    async def next_nudge(self) -> int | None:
        row = await self._fetchone(Q["next_nudge"])
        assert row is not None  # an aggregate: always one row
        at_ms: int | None = row[0]
        return at_ms

    # -- escalations: reads -----------------------------------------------------

    async def find_replay(self, *, workspace_id: str, key: str, not_before_ms: int) -> Replay | None:
        row = await self._fetchone(Q["find_replay"], (workspace_id, key, not_before_ms))
        return replay_from_row(row) if row else None

    async def get_escalation(
        self, *, escalation_id: str, workspace_id: str | None, routes: tuple[str, ...] | None
    ) -> Escalation | None:
        sql, params = get_statement(escalation_id, Q, workspace_id=workspace_id, routes=routes, encode_routes=list)
        row = await self._fetchone(sql, params)
        return None if row is None else escalation_with_history(row)

    async def get_escalations(self, *, escalation_ids: list[str]) -> list[Escalation]:
        return [escalation_with_history(r) for r in await self._fetchall(Q["get_escalations"], (escalation_ids,))]

    async def list_escalations(self, *, query: ListQuery) -> tuple[list[Escalation], str | None]:
        sql, params = list_statement(query, Q, encode_routes=list)
        rows = await self._fetchall(sql, params)
        return page_of([escalation_with_history(r) for r in rows], limit=query.limit)

    async def count_by_status(self, *, workspace_id: str, routes: tuple[str, ...] | None) -> dict[str, int]:
        sql = Q["count_by_status"]
        params: list[Any] = [workspace_id]
        if routes is not None:
            sql += Q["routed_to"]
            params.append(list(routes))
        return dict(await self._fetchall(sql + Q["group_by_status"], params))

    async def deadlines_between(self, *, after_ms: int | None, until_ms: int, limit: int) -> list[tuple[int, str]]:
        if after_ms is None:
            rows = await self._fetchall(Q["deadlines_until"], (until_ms, limit))
        else:
            rows = await self._fetchall(Q["deadlines_between"], (until_ms, after_ms, limit))
        return [tuple(r) for r in rows]

    # -- the outbox -------------------------------------------------------------

    async def pending_deliveries(self, *, limit: int, exclude: set[str]) -> list[Delivery]:
        return [delivery_from_row(r) for r in await self._fetchall(Q["pending_deliveries"], (list(exclude), limit))]

    async def deliveries_of(self, *, escalation_id: str) -> list[Delivery]:
        return [delivery_from_row(r) for r in await self._fetchall(Q["deliveries_of_escalation"], (escalation_id,))]

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
