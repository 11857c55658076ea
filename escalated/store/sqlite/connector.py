"""SQLite's connector: the one store's statements on one file.

Writes are jobs of the group-commit writer (db.py), which runs them on the
event loop; a job written once for both dialects is a coroutine, and here
it never waits (each statement is a few microseconds of C on the loop), so
it is run to its end in one step, in the writer's transaction. Reads go
through aiosqlite; those made on every request are read on the loop itself
(``Database.lookup``) because a thread hop costs more than the read, and
the key, user and policy are kept until the database next changes
(untilchanged.py).

Lists travel as one JSON text (``json_each(:ids)`` in sqlite.sql): the
adapter below is registered for ``list`` values, which sqlite3 would
otherwise refuse.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Sequence
from typing import Any, TypeVar

import orjson

from escalated.domain.records import Replay
from escalated.store import queries
from escalated.store.connector import NO_PARAMS, Connector, Params, Row
from escalated.store.sqlite import escalations
from escalated.store.sqlite.db import Database
from escalated.store.sqlite.untilchanged import UntilChanged

T = TypeVar("T")
_ADD_HISTORY = queries.load("sqlite")["add_history"]


def _list_as_json(values: list[Any]) -> str:
    return orjson.dumps(values).decode()


sqlite3.register_adapter(list, _list_as_json)


class SqliteTx:
    """The writer's connection, as a write job sees it."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def run(self, sql: str, params: Params = NO_PARAMS) -> None:
        self._conn.execute(sql, params)

    async def changed(self, sql: str, params: Params = NO_PARAMS) -> int:
        return self._conn.execute(sql, params).rowcount

    async def one(self, sql: str, params: Params = NO_PARAMS) -> Row | None:
        row: Row | None = self._conn.execute(sql, params).fetchone()
        return row

    async def all(self, sql: str, params: Params = NO_PARAMS) -> list[Row]:
        return self._conn.execute(sql, params).fetchall()

    async def run_many(self, sql: str, params: Sequence[Params]) -> None:
        self._conn.executemany(sql, params)

    async def history(self, *, escalation_id: str, event: str, by: str, at_ms: int) -> None:
        self._conn.execute(_ADD_HISTORY, {"escalation_id": escalation_id, "event": event, "by": by, "at_ms": at_ms})


def run_job(conn: sqlite3.Connection, *, job: Callable[..., Awaitable[T]], kwargs: dict[str, Any]) -> T:
    """The writer's job for an async one: run it to its end in one step."""
    coro: Coroutine[Any, Any, T] = job(SqliteTx(conn), **kwargs)  # type: ignore[assignment]
    try:
        coro.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coro.close()
    raise RuntimeError(f"the write job {job.__qualname__} waited for something; on SQLite a job never does")


class SqliteConnector(Connector):
    def __init__(self, db: Database) -> None:
        self.q = queries.load("sqlite")
        self.db = db
        self.until_changed = UntilChanged(db.data_version)

    async def one(self, sql: str, params: Params = NO_PARAMS) -> Row | None:
        return await self.db.fetchone(sql, params)

    async def all(self, sql: str, params: Params = NO_PARAMS) -> list[Row]:
        return await self.db.fetchall(sql, params)

    async def hot_one(self, sql: str, params: Params = NO_PARAMS) -> Row | None:
        return self.db.lookup(sql, params)

    async def kept(self, key: Hashable, sql: str, params: Params, convert: Callable[[Row], T]) -> T | None:
        def read() -> T | None:
            row = self.db.lookup(sql, params)
            return None if row is None else convert(row)

        return self.until_changed.get(key, read)

    def kept_now(self, key: Hashable) -> object:
        return self.until_changed.peek(key)

    async def hot_all(self, sql: str, params: Params = NO_PARAMS) -> list[Row]:
        return self.db.lookup_rows(sql, params)

    async def kept_all(self, key: Hashable, sql: str, params: Params, convert: Callable[[list[Row]], T]) -> T:
        return self.until_changed.get(key, lambda: convert(self.db.lookup_rows(sql, params)))

    async def write(self, job: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        return await self.db.write(run_job, job=job, kwargs=kwargs)

    def create_escalation(self, **fields: Any) -> Awaitable[Replay | None]:
        # The writer's own future, awaited by the service: no layer between on every create.
        return self.db.writer.submit(escalations.create_escalation, **fields)

    async def close(self) -> None:
        await self.db.close()
