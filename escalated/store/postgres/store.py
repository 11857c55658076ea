"""The PostgreSQL store: ``Store`` for several replicas on one database.

Writes go to this replica's ``PgWriter`` (one connection, group commit);
reads to a small pool, each on a fresh READ COMMITTED snapshot, so a change
committed by any replica is seen by the next read here; except the key,
user and policy every request reads, kept for at most a second and
forgotten when any replica changes one (lookups.py).

A lost connection is an outage, not an error (outage.py): reads and writes
answer 503 ``unavailable`` until the database answers again, then go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from escalated.domain.models import Approval, Attempt, Cancellation, Delivery, Escalation, Resolution
from escalated.domain.records import Change, IdempotencyRecord, ListQuery, Replay
from escalated.domain.review import Nudge
from escalated.store import queries
from escalated.store.base import Resolve, Store
from escalated.store.statements import get_statement, list_statement, page_of
from escalated.store.postgres import jobs, review
from escalated.store.postgres.doorbell import Doorbell
from escalated.store.postgres.feed import ChangeFeed
from escalated.store.postgres.leader import Leadership
from escalated.store.postgres.lookups import Lookups
from escalated.store.postgres.admin import AdminQueries
from escalated.store.postgres.decisionlinks import DecisionLinkQueries
from escalated.store.postgres.reviewerops import ReviewerOpsQueries
from escalated.store.postgres.migrate import migrate
from escalated.store.postgres.outage import CONNECT_TIMEOUT_S, RECOVERY_WAIT_S, Outage, lost_connection
from escalated.store.postgres.writer import LastRows, PgWriter
from escalated.store.rows import delivery_from_row, escalation_with_history, replay_from_row

Q = queries.load("postgres")

READ_POOL_SIZE = 8
# How long a read waits for a free pool connection before its request gets
# 503 (psycopg_pool's default is 30 s; a pool that cannot connect would
# hold every request that long).
POOL_WAIT_S = 10.0


class PostgresStore(AdminQueries, DecisionLinkQueries, ReviewerOpsQueries, Store):
    shared = True

    def __init__(self, url: str, writer: PgWriter, pool: AsyncConnectionPool, outage: Outage) -> None:
        self._url = url
        self._writer = writer
        self._pool = pool
        self._outage = outage
        self._lookups = Lookups()

    @classmethod
    async def open(cls, url: str, *, durability: str = "full") -> PostgresStore:
        await asyncio.to_thread(migrate, url)  # serialised across replicas by an advisory lock
        last = LastRows(lock_sql=Q["lock_history"], insert_sql=Q["add_history"])
        store: PostgresStore | None = None

        async def replace_pool() -> None:  # the outage is over: a fresh pool, not the old one's backoff
            if store is not None:
                await store._replace_pool()

        outage = Outage(url, on_back=replace_pool)
        writer = await PgWriter(url, durability=durability, last_rows=last, outage=outage).start()
        store = cls(url, writer, await _open_pool(url), outage)
        return store

    async def _replace_pool(self) -> None:
        old, self._pool = self._pool, await _open_pool(self._url)
        await old.close(timeout=1.0)

    async def lead(self, stop: asyncio.Event, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        await Leadership(self._url).run(stop, run)

    async def follow(self, stop: asyncio.Event, on_change: Callable[[Change], None]) -> None:
        feed = await ChangeFeed(self, on_change=on_change).start()
        self._writer.on_commit = feed.ring  # our own commits: no need to wait for the doorbell
        bell = Doorbell(self._url, on_ring=feed.ring, on_config=self._lookups.forget)
        try:
            # A task group, not gather: cancelled, gather returns as soon as
            # one of them has stopped, while the other may still be cancelling
            # a query (psycopg waits for the server to confirm). That one
            # outlived follow() and the store's close, and its query was cut
            # when the loop closed ("query cancellation interrupted").
            async with asyncio.TaskGroup() as group:
                group.create_task(feed.run(stop), name="escalated-change-feed")
                group.create_task(bell.run(stop), name="escalated-doorbell")
        finally:
            self._writer.on_commit = None

    async def close(self) -> None:
        await self._outage.close()
        await self._writer.close()
        await self._pool.close()

    async def _fetchall(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        if _holds_nul(params):
            return []
        rows: list[tuple[Any, ...]] = await self._read(sql, params, one=False)
        return rows

    async def _fetchone(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> tuple[Any, ...] | None:
        if _holds_nul(params):
            return None
        row: tuple[Any, ...] | None = await self._read(sql, params, one=True)
        return row

    async def _read(self, sql: str, params: tuple[Any, ...] | list[Any], *, one: bool) -> Any:
        """A read on the pool. One that lost its connection is tried once
        more, when the outage it reported is over (a terminated connection:
        milliseconds)."""
        try:
            return await self._read_once(sql, params, one=one)
        except psycopg.Error as exc:
            if not lost_connection(exc):
                raise
            self._outage.lost(exc)
        try:
            return await self._read_once(sql, params, one=one)
        except psycopg.Error as exc:
            if not lost_connection(exc):
                raise
            raise self._outage.lost(exc) from None

    async def _read_once(self, sql: str, params: tuple[Any, ...] | list[Any], *, one: bool) -> Any:
        """While the database is out of reach, wait ``RECOVERY_WAIT_S`` for it, then 503."""
        if self._outage.down and not await self._outage.wait_back(RECOVERY_WAIT_S):
            raise self._outage.error()
        try:
            async with self._pool.connection(timeout=POOL_WAIT_S) as conn:
                cur = await conn.execute(sql, params)
                return await (cur.fetchone() if one else cur.fetchall())
        except PoolTimeout:  # no connection free or none to be made: not proof of an outage
            raise self._outage.error() from None

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

    async def last_change(self) -> int:
        """The number of the latest committed history entry (0 for none)."""
        row = await self._fetchone(Q["last_change"])
        assert row is not None  # an aggregate: always one row
        seq: int = row[0]
        return seq

    async def changes_after(self, *, seq: int, limit: int) -> list[Change]:
        """Committed history entries after ``seq``, in commit order."""
        rows = await self._fetchall(Q["changes_after"], (seq, limit))
        return [Change(seq=r[0], event=r[1], at_ms=r[2], escalation=escalation_with_history(r[3:])) for r in rows]

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


async def _open_pool(url: str) -> AsyncConnectionPool:
    pool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=READ_POOL_SIZE,
        kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
        open=False,
    )
    try:
        await pool.open(wait=True, timeout=POOL_WAIT_S)
    except BaseException:  # its workers would keep trying to connect, for nobody
        await pool.close()
        raise
    return pool


def _holds_nul(params: tuple[Any, ...] | list[Any]) -> bool:
    """True when a text parameter holds NUL: PostgreSQL text cannot, so such
    a value equals nothing stored, and psycopg would refuse to send it (a
    500 for ``GET /escalations/%00`` or ``?runId=%00`` where SQLite said
    404 or an empty page)."""
    return any(
        ("\x00" in p) if isinstance(p, str) else isinstance(p, (list, tuple)) and _holds_nul(p) for p in params
    )
