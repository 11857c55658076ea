"""Connections: one writer that owns every write, readers beside it.

A write job is a plain function ``fn(conn, **kwargs)`` (keyword arguments only). Concurrent jobs are
grouped into one transaction (group commit): each caller's future resolves
only after the COMMIT that contains its write, so a 201 means committed.
See ``Writer`` for where each part runs.

Reads go through aiosqlite (a thread), except ``lookup``: point reads on
small hot tables (API keys, users, policies) that every request makes, run
directly on the loop because a thread hop costs more than the read.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

import aiosqlite

from escalated.domain.ids import new_id
from escalated.domain.models import DEFAULT_WORKSPACE
from escalated.errors import DatabaseBusy, StorageFull
from escalated.store import migrations, queries
from escalated.timeutil import now_ms

log = logging.getLogger(__name__)
T = TypeVar("T")
# A statement's parameters: positional, or named (``:name``).
Params = tuple[Any, ...] | list[Any] | Mapping[str, Any]
# A job's future, its result and what it raised.
_Outcome = tuple[asyncio.Future[Any], Any, BaseException | None]
Q = queries.load("sqlite")
MAX_GROUP = 512
BUSY_RETRY_S = 0.005
BUSY_TIMEOUT_S = 30.0
# A full disk: clients are told to come back in a few seconds; the log says
# so once a minute at most, not once per request.
FULL_RETRY_AFTER_S = 5
FULL_LOG_EVERY_S = 60.0


def connect(path: Path | str, *, synchronous: str = "FULL", migrated: bool = True) -> sqlite3.Connection:
    """A configured connection, migrated unless told not to (used by the writer and the CLI)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA busy_timeout=30000")
    if migrated:
        migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply what is missing; return the names applied by this call."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(Q["create_migrations_table"])
        done = {row[0] for row in conn.execute(Q["applied_migrations"])}
        applied = []
        for name, sql in migrations.load("sqlite"):
            if name in done:
                continue
            for statement in sql.split(";"):  # store/migrations.py: no ';' inside a comment
                if statement.strip():
                    conn.execute(statement)
            conn.execute(Q["record_migration"], {"name": name, "applied_ms": now_ms()})
            applied.append(name)
        _ensure_default_workspace(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return applied


def _ensure_default_workspace(conn: sqlite3.Connection) -> None:
    if conn.execute(Q["workspace_by_name"], {"name": DEFAULT_WORKSPACE}).fetchone() is None:
        conn.execute(Q["create_workspace"], {"id": new_id("wsp"), "name": DEFAULT_WORKSPACE, "created_ms": now_ms()})


def run_in_transaction(conn: sqlite3.Connection, fn: Callable[..., T], /, **kwargs: Any) -> T:
    """Run one job synchronously in its own transaction (test set-up and benchmarks)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn, **kwargs)
        conn.execute("COMMIT")
        return result
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class Writer:
    """The single writer: jobs run on the event loop, in groups; each group's
    COMMIT (where the fsync happens) runs in a thread of its own.

    Why this split: SQLite holds its write lock from BEGIN to the end of
    COMMIT, so only one group can be in flight whatever we do. What can
    overlap is the fsync (no GIL needed) with the event loop preparing the
    next group. The statements themselves are a few microseconds of C each;
    running them on the loop thread costs less than handing them to another
    thread, which then has to win the GIL back after every statement while
    the loop is busy (measured: the old writer thread spent ~70% of its time
    waiting for the GIL under load).

    While a COMMIT is in flight, new jobs queue in ``_pending``; when it
    completes, its callers are resolved and everything queued meanwhile
    becomes the next group.

    One failing job never undoes the others of its group. Jobs first run
    without savepoints (a SAVEPOINT/RELEASE pair costs about as much as the
    insert of an escalation); if one raises, the group is rolled back and run
    again with a SAVEPOINT per job. A job is a function of the database
    alone, so running it again gives the answer it would have given.
    """

    def __init__(self, conn: sqlite3.Connection, loop: asyncio.AbstractEventLoop) -> None:
        self._conn = conn
        self._loop = loop
        self._pending: list[tuple[Callable[..., Any], dict[str, Any], asyncio.Future[Any]]] = []
        self._busy_since: float | None = None
        self._careful_next = False  # the next group is one that failed on the fast path
        self._closed = False
        self._full_logged_at: float | None = None  # monotonic time of the last "disk full" line
        self._idle = asyncio.Event()  # clear while a group is scheduled, waiting for the lock or committing
        self._idle.set()
        # A plain thread and queue rather than an executor: one hand-off each
        # way per group, with nothing else on the path.
        self._to_commit: queue.SimpleQueue[list[_Outcome] | None] = queue.SimpleQueue()
        self._committer = threading.Thread(target=self._commit_loop, name="escalated-commit", daemon=True)
        self._committer.start()
        self.commits = 0
        self.jobs = 0

    def submit(self, fn: Callable[..., T], /, **kwargs: Any) -> asyncio.Future[T]:
        """The job's future, resolved after the COMMIT that contains it (a
        future to await, not a coroutine: one layer less on every create)."""
        if self._closed:
            raise RuntimeError("the database is closed")
        future: asyncio.Future[T] = self._loop.create_future()
        self._pending.append((fn, kwargs, future))
        if self._idle.is_set():
            self._idle.clear()
            # At the end of this loop iteration: requests parsed in the same
            # iteration share the group.
            self._loop.call_soon(self._start_group)
        return future

    async def close(self) -> None:
        """Refuse new jobs, let queued ones commit, stop the commit thread."""
        self._closed = True
        await self._idle.wait()
        self._to_commit.put(None)
        await self._loop.run_in_executor(None, self._committer.join)

    def _start_group(self) -> None:
        if not self._pending:
            self._idle.set()
            return
        if not self._begin():
            return
        batch = self._take()
        careful, self._careful_next = self._careful_next, False
        try:
            outcomes, raised = self._run_jobs(batch, careful=careful)
        except Exception as exc:  # the connection itself failed (disk full, I/O error)
            if not _is_full(exc):
                log.exception("write group of %d failed", len(batch))
            self._rollback()
            self._finish([(future, None, exc) for *_, future in batch])
            return
        if raised is not None:  # a job raised on the fast path
            self._rollback()
            if len(batch) == 1:  # nothing else to keep: that is its outcome
                self._finish([(batch[0][-1], None, raised)])
            else:  # again, with a savepoint each
                self._pending[0:0] = batch
                self._careful_next = True
                self._loop.call_soon(self._start_group)
            return
        self._to_commit.put(outcomes)

    def _take(self) -> list[Any]:
        batch = self._pending[:MAX_GROUP]
        del self._pending[:MAX_GROUP]
        return batch

    def _run_jobs(self, batch: list[Any], *, careful: bool) -> tuple[list[Any], Exception | None]:
        """Each job's outcome; without ``careful``, stop at the first job that raises and return its error."""
        conn = self._conn
        outcomes: list[_Outcome] = []
        for fn, kwargs, future in batch:
            if careful:
                conn.execute("SAVEPOINT job")
            try:
                result = fn(conn, **kwargs)
            except Exception as exc:  # handed to the caller, never swallowed
                if not careful:
                    return outcomes, exc
                conn.execute("ROLLBACK TO job")
                conn.execute("RELEASE job")
                outcomes.append((future, None, exc))
            else:
                if careful:
                    conn.execute("RELEASE job")
                outcomes.append((future, result, None))
        return outcomes, None

    def _begin(self) -> bool:
        """Take SQLite's write lock without blocking the loop.

        The connection has no busy timeout: when another process (the CLI)
        holds the lock, try again shortly, for up to BUSY_TIMEOUT_S.
        """
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            now = time.monotonic()
            if _is_busy(exc) and now - (self._busy_since or now) < BUSY_TIMEOUT_S:
                self._busy_since = self._busy_since or now
                self._loop.call_later(BUSY_RETRY_S, self._start_group)
                return False
            self._busy_since = None
            batch = self._take()
            error: Exception = exc
            if _is_busy(exc):
                log.warning("write lock held elsewhere for over %g s; failing %d writes", BUSY_TIMEOUT_S, len(batch))
                error = DatabaseBusy(
                    f"another process has held the database's write lock for over {BUSY_TIMEOUT_S:g} s; try again",
                    retry_after_s=1,
                )
            self._finish([(future, None, error) for *_, future in batch])
            return False
        self._busy_since = None
        return True

    def _commit_loop(self) -> None:  # the commit thread
        while (outcomes := self._to_commit.get()) is not None:
            error: BaseException | None = None
            try:
                self._conn.execute("COMMIT")
            except BaseException as exc:
                error = exc
                try:
                    self._rollback()
                except sqlite3.Error:  # the COMMIT's error is the one to report
                    pass
            self._loop.call_soon_threadsafe(self._committed, outcomes, error)

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _committed(self, outcomes: list[Any], exc: BaseException | None) -> None:
        if exc is not None:
            if not _is_full(exc):
                log.error("commit of a write group of %d failed: %s", len(outcomes), exc)
            outcomes = [(future, None, exc) for future, _, _ in outcomes]
        else:
            if self._full_logged_at is not None:
                log.warning("the database's disk has space again; writes succeed")
                self._full_logged_at = None
            self.commits += 1
            self.jobs += len(outcomes)
        self._finish(outcomes)

    def _finish(self, outcomes: list[Any]) -> None:
        _settle_all([(f, result, None if exc is None else self._error_for(exc)) for f, result, exc in outcomes])
        # After the callers just resolved have run: what they write next
        # joins the group that starts now.
        self._loop.call_soon(self._start_group)


    def _error_for(self, exc: BaseException) -> BaseException:
        """What the caller sees: a full disk is 503 ``unavailable`` (one log
        line a minute), not an internal error with a traceback per request."""
        if not _is_full(exc):
            return exc
        now = time.monotonic()
        if self._full_logged_at is None or now - self._full_logged_at >= FULL_LOG_EVERY_S:
            self._full_logged_at = now
            log.error("the database's disk is full (%s); writes answer 503 until there is space", exc)
        return StorageFull(
            "the server's disk is full, so nothing can be saved; try again later", retry_after_s=FULL_RETRY_AFTER_S
        )


def _is_full(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return isinstance(exc, sqlite3.Error) and code == sqlite3.SQLITE_FULL


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _tuples(rows: Iterable[sqlite3.Row]) -> list[tuple[Any, ...]]:
    """The reader has no row factory: sqlite3 gives tuples (aiosqlite's annotation says Row)."""
    return cast("list[tuple[Any, ...]]", rows if isinstance(rows, list) else list(rows))


def _settle_all(outcomes: list[_Outcome]) -> None:
    for future, result, exc in outcomes:
        if future.done():
            continue
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)


class Database:
    """The server's handle: ``write`` goes to the writer, reads to aiosqlite
    (``fetchone``/``fetchall``) or, for hot point reads, ``lookup``."""

    def __init__(
        self,
        path: Path,
        writer: Writer,
        reader: aiosqlite.Connection,
        write_conn: sqlite3.Connection,
        lookup_conn: sqlite3.Connection,
    ):
        self.path = path
        self.writer = writer
        self._reader = reader
        self._write_conn = write_conn
        self._lookup_conn = lookup_conn

    @classmethod
    async def open(cls, path: Path | str, *, durability: str = "full") -> Database:
        synchronous = "FULL" if durability == "full" else "NORMAL"
        write_conn = connect(path, synchronous=synchronous)
        write_conn.execute("PRAGMA busy_timeout=0")  # the writer retries on the loop instead of blocking it
        writer = Writer(write_conn, asyncio.get_running_loop())
        reader = await aiosqlite.connect(str(path))
        await reader.execute("PRAGMA busy_timeout=30000")
        await reader.execute("PRAGMA query_only=1")
        lookup_conn = sqlite3.connect(str(path), isolation_level=None)  # used on the loop thread only
        # WAL readers do not wait for writers; this only covers a checkpoint
        # resetting the WAL, a rare and short moment.
        lookup_conn.execute("PRAGMA busy_timeout=200")
        lookup_conn.execute("PRAGMA query_only=1")
        return cls(Path(path), writer, reader, write_conn, lookup_conn)

    async def write(self, fn: Callable[..., T], /, **kwargs: Any) -> T:
        return await self.writer.submit(fn, **kwargs)

    async def fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return _tuples(await self._reader.execute_fetchall(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        rows = _tuples(await self._reader.execute_fetchall(sql, params))
        return rows[0] if rows else None

    def lookup(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """One row by a unique key, read on the calling (loop) thread.

        Only for indexed point reads of small, hot tables: anything that may
        scan or touch cold pages belongs in ``fetchone``.
        """
        rows = self.lookup_rows(sql, params)
        return rows[0] if rows else None

    def lookup_rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """The few rows of an indexed read of a small, hot table, on the loop
        thread (the active rules of a policy, read on every create)."""
        # fetchall steps the statement to its end, which ends the read
        # transaction at once: no snapshot outlives the call.
        return self._lookup_conn.execute(sql, params).fetchall()

    def data_version(self) -> int:
        """Changes whenever another connection (our writer, another process)
        has committed since the last call: what ``UntilChanged`` keeps rows by."""
        version: int = self._lookup_conn.execute("PRAGMA data_version").fetchone()[0]
        return version

    async def close(self) -> None:
        await self._reader.close()
        await self.writer.close()
        self._write_conn.close()
        self._lookup_conn.close()
