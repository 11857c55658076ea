"""The PostgreSQL writer: one connection per replica, group commit.

A write job is ``async def job(tx, *, a, b)`` over a ``GroupTx`` (the
psycopg connection, plus rows the job asks to be written last), submitted
as ``submit(job, a=..., b=...)`` as in the SQLite writer. Jobs submitted
while a group is in flight wait and form the next group; a group is ONE
transaction, so N concurrent requests cost one COMMIT (one WAL flush)
instead of N. Measured on PostgreSQL 15:
7-15k creates/s this way against 0.4-3.7k for one transaction per request.

Each group ends with one ``pg_notify`` on the doorbell channel (never one
per request: NOTIFY takes a database-wide lock at COMMIT, so per-request
notifies would serialise every commit). Other replicas hear it and re-read.
Its payload is ``'config'`` when a job changed keys, users or policies
(``GroupTx.config_changed``): replicas then forget their cached look-ups.

As in the SQLite writer, one failing job never undoes the others of its
group: the group first runs pipelined without savepoints; if anything
raises, it is rolled back and run again with a SAVEPOINT per job. A job is a function of
the database alone, so running it again gives the answer it would have
given.

Two replicas' groups can deadlock on each other's rows (two last approvals
of one escalation, say): PostgreSQL then fails one statement of one of them
(40P01; 40001 likewise), and the other can finish only once this one's
transaction lets its locks go. So the jobs failed that way are run again, in
a group of their own after the rest committed, as PostgreSQL's docs advise,
up to ``TRANSIENT_RETRIES`` times; a write still failed that way after
that answers 503 ``unavailable`` with ``Retry-After``: nothing of it was
written, and trying again later can succeed.

A group whose connection is lost fails as a whole with 503 ``unavailable``
(outage.py): whether its COMMIT reached the database is unknown, so it is
never run again here; a client retries (a create with its Idempotency-Key).
The next group connects afresh, once the database answers again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
import psycopg

from escalated.errors import DatabaseBusy, DatabaseUnavailable
from escalated.store.connector import NO_PARAMS
from escalated.store.postgres.outage import CONNECT_TIMEOUT_S, RECOVERY_WAIT_S, Outage, lost_connection

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_GROUP = 512
DOORBELL_CHANNEL = "escalated_changes"
CONFIG_CHANGED = "config"  # the doorbell's payload after a change to keys, users or policies
SYNCHRONOUS_COMMIT = {"full": "on", "normal": "off"}  # --durability -> synchronous_commit
# How long a group waits for a lock another session holds (a stuck psql
# session, a long migration) before its writes fail as 503 busy, as the
# SQLite writer does after BUSY_TIMEOUT_S; without it every write of the
# replica would queue behind that session for as long as it lives.
LOCK_TIMEOUT_S = 30.0
# What PostgreSQL answers a transaction that lost a race it could not order
# (40P01, 40001): nothing is wrong with the job, only with the moment.
TRANSIENT = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
TRANSIENT_RETRIES = 3

Job = Callable[..., Awaitable[Any]]


@attrs.frozen
class LastRows:
    """Rows every job may add, written at the group's end under a lock held
    to COMMIT: their identity numbers then rise in commit order across
    replicas (what the history needs for /events ids)."""

    lock_sql: str
    insert_sql: str


class GroupTx:
    """What a job sees: the group's connection and its rows-to-write-last."""

    def __init__(self, conn: psycopg.AsyncConnection, pipeline: psycopg.AsyncPipeline | None = None) -> None:
        self.conn = conn
        self.last_rows: list[Any] = []  # each a statement's parameters, as LastRows.insert_sql takes them
        self.config_changed = False  # set by a job that changed keys, users or policies
        self._pipeline = pipeline

    async def execute(self, sql: str, params: tuple[Any, ...] | list[Any] | dict[str, Any] | None = None) -> psycopg.AsyncCursor:
        return await self.conn.execute(sql, params)

    async def changed(self, sql: str, params: tuple[Any, ...] | list[Any] | Mapping[str, Any] | None = None) -> int:
        """The number of rows a statement changed. In a pipeline that number
        exists only once the server has answered, so wait for it here (a
        compare-and-set must never read "unknown" as "nothing changed")."""
        cur = await self.conn.execute(sql, params)
        if self._pipeline is not None:
            await self._pipeline.sync()
        return cur.rowcount

    def write_last(self, row: tuple[Any, ...] | Mapping[str, Any]) -> None:
        self.last_rows.append(row)

    async def history(self, *, escalation_id: str, event: str, by: str, at_ms: int) -> None:
        """Numbered at COMMIT (see LastRows)."""
        self.last_rows.append({"escalation_id": escalation_id, "event": event, "by": by, "at_ms": at_ms})

    # -- the Tx of store/connector.py: what a job written once for both dialects uses

    async def run(self, sql: str, params: Mapping[str, Any] = NO_PARAMS) -> None:
        await self.conn.execute(sql, params)

    async def one(self, sql: str, params: Mapping[str, Any] = NO_PARAMS) -> tuple[Any, ...] | None:
        return await (await self.conn.execute(sql, params)).fetchone()

    async def all(self, sql: str, params: Mapping[str, Any] = NO_PARAMS) -> list[tuple[Any, ...]]:
        return await (await self.conn.execute(sql, params)).fetchall()

    async def run_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        if params:
            async with self.conn.cursor() as cur:
                await cur.executemany(sql, params)


async def open_connection(url: str, *, durability: str = "full") -> psycopg.AsyncConnection:
    """A writer connection: autocommit (the writer issues BEGIN/COMMIT itself)."""
    conn = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    # normal: a COMMIT returns before its WAL reaches disk; a crash of the
    # database server (not of a replica) may lose the last few groups.
    await conn.execute(f"SET synchronous_commit = {SYNCHRONOUS_COMMIT[durability]}")
    return conn


class PgWriter:
    """Groups concurrent write jobs into one transaction on one connection."""

    def __init__(
        self,
        url: str,
        *,
        durability: str = "full",
        channel: str = DOORBELL_CHANNEL,
        last_rows: LastRows | None = None,
        outage: Outage | None = None,
    ) -> None:
        self._url = url
        self._outage = outage
        self._last_rows = last_rows
        self._durability = durability
        self._channel = channel
        self._conn: psycopg.AsyncConnection | None = None
        self._pending: list[tuple[Job, dict[str, Any], asyncio.Future[Any]]] = []
        self._wake = asyncio.Event()
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        self.on_commit: Callable[[], None] | None = None  # after each committed group (the change feed)
        self.commits = 0
        self.jobs = 0

    async def start(self) -> PgWriter:
        self._conn = await open_connection(self._url, durability=self._durability)
        self._task = asyncio.create_task(self._run(), name="escalated-pg-writer")
        return self

    async def submit(self, job: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        if self._closed:
            raise RuntimeError("the database is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((job, kwargs, future))
        self._wake.set()
        return await future

    async def close(self) -> None:
        """Refuse new jobs, let queued ones commit, close the connection."""
        self._closed = True
        self._wake.set()
        if self._task is not None:
            await self._task
        if self._conn is not None:
            await self._conn.close()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            # Let requests that arrive in this same loop iteration join the group.
            await asyncio.sleep(0)
            while self._pending:
                batch = self._pending[:MAX_GROUP]
                del self._pending[:MAX_GROUP]
                await self._commit_group(batch)
            if self._closed:
                return

    async def _commit_group(self, batch: list[Any]) -> None:
        try:
            conn = await self._connection()
            outcomes = await self._run_group_retrying(conn, batch)
        except DatabaseUnavailable as exc:  # a known outage: nothing was sent
            outcomes = [(future, None, exc) for _, _, future in batch]
        except Exception as exc:
            lost = self._lost(exc)
            if not lost:  # e.g. the COMMIT itself refused
                log.exception("write group of %d failed", len(batch))
            await self._drop_connection()  # its state is unknown: start the next group afresh
            error = self._unavailable(exc) if lost else exc
            outcomes = [(future, None, error) for _, _, future in batch]
        else:
            self.commits += 1
            self.jobs += len(batch)
            if self.on_commit is not None:
                self.on_commit()
        for future, result, raised in outcomes:
            if future.done():
                continue
            if raised is not None:
                future.set_exception(raised)
            else:
                future.set_result(result)

    async def _run_group_retrying(self, conn: psycopg.AsyncConnection, batch: list[Any]) -> list[Any]:
        """``_run_group``, with the jobs a deadlock or a serialization failure
        failed run again in a fresh transaction (see the module's docstring)."""
        done: list[Any] = []
        retries = 0
        while True:
            try:
                outcomes = await self._run_group(conn, batch)
            except TRANSIENT as exc:  # the group's end (its table lock, its COMMIT): rolled back whole
                if retries == TRANSIENT_RETRIES:
                    raise _contended(exc) from exc
                retries += 1
                log.info("a write group of %d met %s; running it again", len(batch), type(exc).__name__)
                continue
            again = [entry for entry, (_, _, raised) in zip(batch, outcomes, strict=True) if isinstance(raised, TRANSIENT)]
            if not again:
                return done + outcomes
            if retries == TRANSIENT_RETRIES:
                return done + [
                    (future, result, _contended(raised) if isinstance(raised, TRANSIENT) else raised)
                    for future, result, raised in outcomes
                ]
            retries += 1
            done += [outcome for outcome in outcomes if not isinstance(outcome[2], TRANSIENT)]
            log.info("%d write(s) met a deadlock or a serialization failure; running them again", len(again))
            batch = again

    async def _run_group(self, conn: psycopg.AsyncConnection, batch: list[Any]) -> list[Any]:
        """The fast path, pipelined; if anything in it raises, the careful path.

        In pipeline mode statements are sent without waiting for their
        answers (a job that reads waits for its own), so a group costs about
        one round trip instead of one per statement. An error surfaces at
        the next wait, not necessarily in the job that caused it: the
        careful path (no pipeline, a savepoint per job) then gives each job
        its own outcome.
        """
        try:
            async with conn.pipeline() as pipeline:
                tx = GroupTx(conn, pipeline)
                await self._begin(conn)
                outcomes, raised = await self._run_jobs(tx, batch, careful=False)
                if raised is None:
                    await self._end_group(tx)
        except psycopg.Error as exc:
            if conn.broken:
                raise
            raised = exc
        if raised is None:
            return outcomes
        if isinstance(raised, psycopg.Error):
            await self._forget_prepared(conn)
        else:
            await self._rollback(conn)
        if isinstance(raised, psycopg.errors.LockNotAvailable):
            # Not this group's fault, and the careful path would wait again per job.
            log.warning("a lock held elsewhere for over %g s; failing %d writes", LOCK_TIMEOUT_S, len(batch))
            busy = DatabaseBusy(
                f"another session has held a lock these writes need for over {LOCK_TIMEOUT_S:g} s; try again",
                retry_after_s=1,
            )
            return [(future, None, busy) for _, _, future in batch]
        await self._begin(conn)
        tx = GroupTx(conn)
        try:
            outcomes, _ = await self._run_jobs(tx, batch, careful=True)
            await self._end_group(tx)
        except BaseException:
            await self._rollback(conn)
            raise
        return outcomes

    async def _begin(self, conn: psycopg.AsyncConnection) -> None:
        await conn.execute("BEGIN")
        await conn.execute(f"SET LOCAL lock_timeout = {int(LOCK_TIMEOUT_S * 1000)}")

    async def _end_group(self, tx: GroupTx) -> None:
        conn = tx.conn
        if tx.last_rows and self._last_rows is not None:
            await conn.execute(self._last_rows.lock_sql)
            async with conn.cursor() as cur:
                await cur.executemany(self._last_rows.insert_sql, tx.last_rows)
        payload = CONFIG_CHANGED if tx.config_changed else ""
        await conn.execute("SELECT pg_notify(%s, %s)", (self._channel, payload))
        await conn.execute("COMMIT")

    async def _forget_prepared(self, conn: psycopg.AsyncConnection) -> None:
        """Roll back a group the database failed in the pipeline, and forget
        the connection's prepared statements. After the error the server
        skips the rest of the pipeline, the PREPAREs psycopg sent for
        statements run often enough (``prepare_threshold``) among them, yet
        psycopg counts them prepared: the next run of such a statement (the
        doorbell's ``pg_notify`` at the careful path's end, say) would fail
        with "prepared statement _pg3_N does not exist". psycopg's own
        ``rollback()`` clears its cache and deallocates them all on the
        server; they are prepared again as they are used."""
        if not conn.broken:
            await conn.rollback()

    async def _rollback(self, conn: psycopg.AsyncConnection) -> None:
        if not conn.broken and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            await conn.execute("ROLLBACK")

    async def _run_jobs(self, tx: GroupTx, batch: list[Any], *, careful: bool) -> tuple[list[Any], Exception | None]:
        """Each job's outcome; without ``careful``, stop at the first job that raises."""
        conn = tx.conn
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        for job, kwargs, future in batch:
            if careful:
                await conn.execute("SAVEPOINT job")
            kept = len(tx.last_rows)
            try:
                result = await job(tx, **kwargs)
            except Exception as exc:  # handed to the caller, never swallowed
                if conn.broken:
                    raise  # the connection, not the job: fails the whole group
                if not careful:
                    return outcomes, exc
                await conn.execute("ROLLBACK TO SAVEPOINT job")
                await conn.execute("RELEASE SAVEPOINT job")
                del tx.last_rows[kept:]  # undone with the rest of the job
                outcomes.append((future, None, exc))
            else:
                if careful:
                    await conn.execute("RELEASE SAVEPOINT job")
                outcomes.append((future, result, None))
        return outcomes, None

    def _lost(self, exc: Exception) -> bool:
        """Whether a group failed because its connection is gone."""
        return lost_connection(exc) or (self._conn is not None and (self._conn.broken or self._conn.closed))

    def _unavailable(self, exc: Exception) -> DatabaseUnavailable:
        if self._outage is not None:
            return self._outage.lost(exc)  # logged once per outage
        log.error("a write group failed on a lost connection: %s", exc)
        return DatabaseUnavailable("the database connection was lost; try again", retry_after_s=1)

    async def _connection(self) -> psycopg.AsyncConnection:
        outage = self._outage
        if outage is not None and outage.down and not await outage.wait_back(RECOVERY_WAIT_S):
            raise outage.error()  # the outage's probe, not each group, finds when it is back
        if self._conn is None or self._conn.closed:
            self._conn = await open_connection(self._url, durability=self._durability)
        return self._conn

    async def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                await self._conn.close()
            except psycopg.Error:
                pass
            self._conn = None


def _contended(exc: Exception) -> DatabaseUnavailable:
    """A deadlock or serialization failure that outlasted the retries: transient, so a 503."""
    log.warning("a write still met %s after %d retries; answering 503", type(exc).__name__, TRANSIENT_RETRIES)
    return DatabaseUnavailable("the database is contended; try again", retry_after_s=1)
