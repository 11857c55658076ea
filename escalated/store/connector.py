"""The narrow seam under the one store: what a dialect has to provide.

``SqlStore`` (sqlstore.py) and its parts are written once, over a
``Connector``: they name SQL (the dialect's named queries, ``connector.q``,
with ``:name`` parameters) and turn rows into objects; the connector runs
the statements. Everything a dialect does its own way stays inside its
connector: on SQLite (sqlite/connector.py) the group-commit writer on the
loop, the hot reads on the loop kept until ``PRAGMA data_version`` moves;
on PostgreSQL (postgres/connector.py) the pooled reads, the writer's
pipelined groups, the per-replica look-ups kept at most 1 s, the outage
that answers 503, leading and following.

A write job is ``async def job(tx, *, ...)``: it runs inside the writer's
group transaction (a 201 means committed) and talks to the database only
through ``tx``. On SQLite nothing in a job ever waits (the statements run
on the loop), which that connector checks.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from escalated.domain.records import Change, Replay

T = TypeVar("T")
Row = tuple[Any, ...]
Params = Mapping[str, Any]
NO_PARAMS: Params = {}
NOT_KEPT = object()  # ``kept_now``: nothing kept for that key now


class Tx(Protocol):
    """A write job's view of the writer's transaction."""

    async def run(self, sql: str, params: Params = NO_PARAMS) -> None: ...

    async def changed(self, sql: str, params: Params = NO_PARAMS) -> int:
        """The number of rows the statement changed (what a compare-and-set checks)."""
        ...

    async def one(self, sql: str, params: Params = NO_PARAMS) -> Row | None: ...

    async def all(self, sql: str, params: Params = NO_PARAMS) -> list[Row]: ...

    async def run_many(self, sql: str, params: Sequence[Params]) -> None: ...

    async def history(self, *, escalation_id: str, event: str, by: str, at_ms: int) -> None:
        """An entry of the escalation's history (on PostgreSQL numbered at COMMIT, in commit order)."""
        ...


class Connector(abc.ABC):
    """One dialect's connections, writer and the behaviour only it has."""

    q: Mapping[str, str]  # the dialect's named queries, parameters spelled for its driver
    shared = False  # several processes on one database (see Store.shared)

    @abc.abstractmethod
    async def one(self, sql: str, params: Params = NO_PARAMS) -> Row | None: ...

    @abc.abstractmethod
    async def all(self, sql: str, params: Params = NO_PARAMS) -> list[Row]: ...

    @abc.abstractmethod
    async def hot_one(self, sql: str, params: Params = NO_PARAMS) -> Row | None:
        """A point read made on every request (a web session): the cheapest way the dialect has."""

    @abc.abstractmethod
    async def kept(self, key: Hashable, sql: str, params: Params, convert: Callable[[Row], T]) -> T | None:
        """``convert(row)`` of a row read on every request (a key, a user, a
        policy), kept as the dialect allows (Store's docstring states the bounds)."""

    def kept_now(self, key: Hashable) -> object:
        """What ``kept`` holds for ``key`` at this moment, without reading or
        waiting: ``NOT_KEPT`` when it holds nothing usable (``kept`` reads it)."""
        return NOT_KEPT

    @abc.abstractmethod
    async def hot_all(self, sql: str, params: Params = NO_PARAMS) -> list[Row]:
        """The few rows of an indexed read made on every create (a policy's active rules)."""

    @abc.abstractmethod
    async def kept_all(self, key: Hashable, sql: str, params: Params, convert: Callable[[list[Row]], T]) -> T:
        """``convert(rows)`` of a read made on every create, kept as the dialect
        may: SQLite until the database next changes, PostgreSQL not at all."""

    @abc.abstractmethod
    async def write(self, job: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        """``await job(tx, **kwargs)`` in the writer's transaction; returns after its COMMIT."""

    @abc.abstractmethod
    def create_escalation(self, **fields: Any) -> Awaitable[Replay | None]:
        """Store.create_escalation, its keywords passed on (typed there and
        in the dialect's job): the one write whose steps differ by dialect
        on purpose (the hot path: each dialect's cheapest statements, and on
        PostgreSQL an Idempotency-Key claimed across replicas)."""

    async def config_write(self, job: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        """``write``, for a job that changes keys, users or policies: what ``kept`` holds."""
        return await self.write(job, **kwargs)

    async def lead(self, stop: asyncio.Event, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        await run()

    async def follow(self, stop: asyncio.Event, on_change: Callable[[Change], None]) -> None:
        await stop.wait()

    @abc.abstractmethod
    async def close(self) -> None: ...
