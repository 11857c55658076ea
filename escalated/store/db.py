"""Connections: one writer thread that owns every write, readers via aiosqlite.

Why a thread of our own for writes: a write job is a plain function that
runs its whole transaction inside the writer thread, so it costs one hop
between the event loop and SQLite instead of one per statement, and
concurrent jobs are grouped into one transaction (group commit): each
caller's future resolves only after the COMMIT that contains its write.
Each job runs inside a SAVEPOINT, so one failing job does not undo the
others of its group.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from escalated.store.schema import MIGRATIONS
from escalated.timeutil import now_ms

log = logging.getLogger(__name__)
T = TypeVar("T")
_STOP = object()
MAX_GROUP = 512


def connect(path: Path | str, *, synchronous: str = "FULL") -> sqlite3.Connection:
    """A configured, migrated connection (used by the writer and the CLI)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA busy_timeout=30000")
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_ms INTEGER NOT NULL)")
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            for statement in sql.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO migrations (name, applied_ms) VALUES (?, ?)", (name, now_ms()))
        from escalated.store.admin import ensure_default_workspace

        ensure_default_workspace(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def run_in_transaction(conn: sqlite3.Connection, fn: Callable[..., T], *args: Any) -> T:
    """Run one job synchronously in its own transaction (the CLI's path)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn, *args)
        conn.execute("COMMIT")
        return result
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class Writer:
    """The single writer: a thread draining a queue of jobs into group commits."""

    def __init__(self, conn: sqlite3.Connection, loop: asyncio.AbstractEventLoop) -> None:
        self._conn = conn
        self._loop = loop
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="escalated-writer", daemon=True)
        self.commits = 0
        self.jobs = 0
        self._thread.start()

    async def submit(self, fn: Callable[..., T], *args: Any) -> T:
        future = self._loop.create_future()
        self._queue.put((fn, args, future))
        return await future

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            batch = [item]
            while len(batch) < MAX_GROUP:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    self._queue.put(_STOP)
                    break
                batch.append(nxt)
            self._run_group(batch)

    def _run_group(self, batch: list) -> None:
        conn = self._conn
        outcomes: list[tuple[asyncio.Future, Any, BaseException | None]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for fn, args, future in batch:
                conn.execute("SAVEPOINT job")
                try:
                    result = fn(conn, *args)
                except BaseException as exc:  # handed to the caller, never swallowed
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                    outcomes.append((future, None, exc))
                else:
                    conn.execute("RELEASE job")
                    outcomes.append((future, result, None))
            conn.execute("COMMIT")
            self.commits += 1
            self.jobs += len(batch)
        except BaseException as exc:
            log.exception("write group of %d failed", len(batch))
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            outcomes = [(future, None, exc) for _, _, future in batch]
        # One wake-up of the event loop per group, not one per job.
        self._loop.call_soon_threadsafe(_settle_all, outcomes)


def _settle_all(outcomes: list[tuple[asyncio.Future, Any, BaseException | None]]) -> None:
    for future, result, exc in outcomes:
        if future.done():
            continue
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)


class Database:
    """The server's handle: ``write`` goes to the writer, reads to aiosqlite."""

    def __init__(self, path: Path, writer: Writer, reader: aiosqlite.Connection, write_conn: sqlite3.Connection):
        self.path = path
        self.writer = writer
        self._reader = reader
        self._write_conn = write_conn

    @classmethod
    async def open(cls, path: Path | str, *, durability: str = "full") -> Database:
        synchronous = "FULL" if durability == "full" else "NORMAL"
        write_conn = connect(path, synchronous=synchronous)
        writer = Writer(write_conn, asyncio.get_running_loop())
        reader = await aiosqlite.connect(str(path))
        await reader.execute("PRAGMA busy_timeout=30000")
        await reader.execute("PRAGMA query_only=1")
        return cls(Path(path), writer, reader, write_conn)

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.writer.submit(fn, *args)

    async def fetchall(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        return list(await self._reader.execute_fetchall(sql, params))

    async def fetchone(self, sql: str, params: tuple | list = ()) -> tuple | None:
        rows = await self._reader.execute_fetchall(sql, params)
        return rows[0] if rows else None

    async def close(self) -> None:
        await self._reader.close()
        await asyncio.get_running_loop().run_in_executor(None, self.writer.close)
        self._write_conn.close()
