"""PostgreSQL's connector: the one store's statements for several replicas on one database.

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
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from escalated.domain.records import Change, Replay
from escalated.store import queries
from escalated.store.connector import NO_PARAMS, Connector, Params, Row
from escalated.store.postgres import jobs
from escalated.store.postgres.doorbell import Doorbell
from escalated.store.postgres.feed import ChangeFeed
from escalated.store.postgres.leader import Leadership
from escalated.store.postgres.lookups import Lookups
from escalated.store.postgres.migrate import migrate
from escalated.store.postgres.outage import CONNECT_TIMEOUT_S, RECOVERY_WAIT_S, Outage, lost_connection
from escalated.store.postgres.writer import GroupTx, LastRows, PgWriter
from escalated.store.rows import escalation_with_history

T = TypeVar("T")
Q = queries.load("postgres")

READ_POOL_SIZE = 8
# How long a read waits for a free pool connection before its request gets
# 503 (psycopg_pool's default is 30 s; a pool that cannot connect would
# hold every request that long).
POOL_WAIT_S = 10.0


class PostgresConnector(Connector):
    shared = True

    def __init__(self, url: str, writer: PgWriter, pool: AsyncConnectionPool, outage: Outage) -> None:
        self.q = Q
        self._url = url
        self.writer = writer
        self._pool = pool
        self._outage = outage
        self.lookups = Lookups()

    @classmethod
    async def open(cls, url: str, *, durability: str = "full") -> PostgresConnector:
        await asyncio.to_thread(migrate, url)  # serialised across replicas by an advisory lock
        last = LastRows(lock_sql=Q["lock_history"], insert_sql=Q["add_history"])
        connector: PostgresConnector | None = None

        async def replace_pool() -> None:  # the outage is over: a fresh pool, not the old one's backoff
            if connector is not None:
                await connector._replace_pool()

        outage = Outage(url, on_back=replace_pool)
        writer = await PgWriter(url, durability=durability, last_rows=last, outage=outage).start()
        connector = cls(url, writer, await _open_pool(url), outage)
        return connector

    async def _replace_pool(self) -> None:
        old, self._pool = self._pool, await _open_pool(self._url)
        await old.close(timeout=1.0)

    # -- reads --------------------------------------------------------------------

    async def all(self, sql: str, params: Params | tuple[Any, ...] | list[Any] = NO_PARAMS) -> list[Row]:
        if _holds_nul(params):
            return []
        rows: list[Row] = await self._read(sql, params, one=False)
        return rows

    async def one(self, sql: str, params: Params | tuple[Any, ...] | list[Any] = NO_PARAMS) -> Row | None:
        if _holds_nul(params):
            return None
        row: Row | None = await self._read(sql, params, one=True)
        return row

    async def hot_one(self, sql: str, params: Params = NO_PARAMS) -> Row | None:
        return await self.one(sql, params)

    async def kept(self, key: Hashable, sql: str, params: Params, convert: Callable[[Row], T]) -> T | None:
        async def read() -> T | None:
            row = await self.one(sql, params)
            return None if row is None else convert(row)

        return await self.lookups.get(key, read)

    def kept_now(self, key: Hashable) -> object:
        return self.lookups.peek(key)

    async def hot_all(self, sql: str, params: Params = NO_PARAMS) -> list[Row]:
        return await self.all(sql, params)

    async def kept_all(self, key: Hashable, sql: str, params: Params, convert: Callable[[list[Row]], T]) -> T:
        """Not kept: a change to rules does not ring the doorbell's 'config'."""
        return convert(await self.all(sql, params))

    async def _read(self, sql: str, params: Any, *, one: bool) -> Any:
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

    async def _read_once(self, sql: str, params: Any, *, one: bool) -> Any:
        """While the database is out of reach, wait ``RECOVERY_WAIT_S`` for it, then 503."""
        if self._outage.down and not await self._outage.wait_back(RECOVERY_WAIT_S):
            raise self._outage.error()
        try:
            async with self._pool.connection(timeout=POOL_WAIT_S) as conn:
                cur = await conn.execute(sql, params)
                return await (cur.fetchone() if one else cur.fetchall())
        except PoolTimeout:  # no connection free or none to be made: not proof of an outage
            raise self._outage.error() from None

    # -- writes -------------------------------------------------------------------

    async def write(self, job: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        return await self.writer.submit(job, **kwargs)

    async def create_escalation(self, **fields: Any) -> Replay | None:
        return await self.writer.submit(jobs.create_escalation, **fields)

    async def config_write(self, job: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        """Marks its commit group (``config_changed``: every other replica
        forgets its look-ups) and forgets them here once committed."""
        try:
            return await self.writer.submit(_changing_config, job=job, kwargs=kwargs)
        finally:
            self.lookups.forget()

    # -- several replicas -----------------------------------------------------------

    async def lead(self, stop: asyncio.Event, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        await Leadership(self._url).run(stop, run)

    async def follow(self, stop: asyncio.Event, on_change: Callable[[Change], None]) -> None:
        feed = await ChangeFeed(self, on_change=on_change).start()
        self.writer.on_commit = feed.ring  # our own commits: no need to wait for the doorbell
        bell = Doorbell(self._url, on_ring=feed.ring, on_config=self.lookups.forget)
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
            self.writer.on_commit = None

    async def last_change(self) -> int:
        """The number of the latest committed history entry (0 for none)."""
        row = await self.one(Q["last_change"])
        assert row is not None  # an aggregate: always one row
        seq: int = row[0]
        return seq

    async def changes_after(self, *, seq: int, limit: int) -> list[Change]:
        """Committed history entries after ``seq``, in commit order."""
        rows = await self.all(Q["changes_after"], {"seq": seq, "limit": limit})
        return [Change(seq=r[0], event=r[1], at_ms=r[2], escalation=escalation_with_history(r[3:])) for r in rows]

    async def close(self) -> None:
        await self._outage.close()
        await self.writer.close()
        await self._pool.close()


async def _changing_config(tx: GroupTx, *, job: Callable[..., Awaitable[T]], kwargs: dict[str, Any]) -> T:
    tx.config_changed = True
    return await job(tx, **kwargs)


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


def _holds_nul(params: Any) -> bool:
    """True when a text parameter holds NUL: PostgreSQL text cannot, so such
    a value equals nothing stored, and psycopg would refuse to send it (a
    500 for ``GET /escalations/%00`` or ``?runId=%00`` where SQLite said
    404 or an empty page)."""
    values = params.values() if isinstance(params, dict) else params
    return any(("\x00" in p) if isinstance(p, str) else isinstance(p, (list, tuple)) and _holds_nul(p) for p in values)
