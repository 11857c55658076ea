"""When PostgreSQL goes away: tell lost connections from other errors, answer
503 while it is gone, and notice at once when it is back.

A replica's connections drop when PostgreSQL restarts or fails over, when a
pooler restarts, or when someone runs ``pg_terminate_backend``. None of that
may stop the replica (docs/CONTRACT.md). Whichever part of the store loses
a connection reports it here (``lost``); from then on, until one probe
connection gets an answer, reads and writes wait ``RECOVERY_WAIT_S`` for it
and then fail with ``DatabaseUnavailable`` (503 ``unavailable``,
``Retry-After``) instead of each trying a connection of its own. The probe tries every ``PROBE_S``; when it
gets through, ``on_back`` runs (the store replaces its read pool, whose own
reconnect backoff doubles to tens of seconds) and the outage is over.

A connection terminated while the database is fine is an outage of a few
milliseconds: the probe's first try gets through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg

from escalated.errors import DatabaseUnavailable

log = logging.getLogger(__name__)
# psycopg_pool logs a warning, traceback-like, per failed reconnect and per
# discarded connection (a dozen lines per replica for a 20 s outage); the
# outage is logged here, once when it starts and once when it ends.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
PROBE_S = 0.5
# What a 503 asks clients to wait: a few probes' worth, so three replicas'
# clients do not retry in a storm while a database restarts.
RETRY_AFTER_S = 2
# libpq waits forever for a connection by default: a database behind a
# silent network would hang every part that reconnects.
CONNECT_TIMEOUT_S = 5
# How long a read or a write group waits for the probe while the database is
# out of reach, before it answers 503: a terminated connection is back in
# milliseconds, and is then no error at all.
RECOVERY_WAIT_S = 1.0


def lost_connection(exc: BaseException) -> bool:
    """True when ``exc`` says the connection is gone, not that a statement
    failed: libpq's own errors (no SQLSTATE: refused, reset, closed by the
    server), class 08 (connection exception) and 57P (the server shutting
    down or terminating the session; 57014, a cancelled query, is not one)."""
    if isinstance(exc, psycopg.InterfaceError):
        return "closed" in str(exc)  # "the connection is closed"; other InterfaceErrors are misuse
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57P"))


async def connect(url: str, **kwargs: Any) -> psycopg.AsyncConnection:
    """A connection that gives up after ``CONNECT_TIMEOUT_S``."""
    return await psycopg.AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_S, **kwargs)


class Outage:
    """Whether this replica reaches its database, as its connections last told."""

    def __init__(self, url: str, *, on_back: Callable[[], Awaitable[None]], probe_s: float = PROBE_S) -> None:
        self._url = url
        self._on_back = on_back
        self._probe_s = probe_s
        self._since: float | None = None
        self._back = asyncio.Event()
        self._back.set()
        self._probe: asyncio.Task[None] | None = None
        self._closed = False
        self.outages = 0

    @property
    def down(self) -> bool:
        return self._since is not None

    def error(self) -> DatabaseUnavailable:
        return DatabaseUnavailable("the database cannot be reached; try again", retry_after_s=RETRY_AFTER_S)

    def lost(self, exc: BaseException) -> DatabaseUnavailable:
        """Report a lost connection; the 503 to answer with."""
        if self._since is None:
            self._since = time.monotonic()
            self.outages += 1
            self._back.clear()
            # One line per outage, not one per failed request.
            log.error("lost the database connection (%s); answering 503 unavailable until it is back", first_line(exc))
            if not self._closed:  # a write failing while the store closes starts no task to outlive it
                self._probe = asyncio.create_task(self._until_back(), name="escalated-db-probe")
        return self.error()

    async def wait_back(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the outage to end; whether it did."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._back.wait(), timeout_s)
        return not self.down

    async def close(self) -> None:
        self._closed = True
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)

    async def _until_back(self) -> None:
        while not await self._reachable():
            await asyncio.sleep(self._probe_s)
        assert self._since is not None
        log.warning("the database answers again after %.1f s; serving", time.monotonic() - self._since)
        self._since = None
        self._back.set()

    async def _reachable(self) -> bool:
        try:
            async with await connect(self._url, autocommit=True) as conn:
                await conn.execute("SELECT 1")
            await self._on_back()
        except (psycopg.Error, OSError, TimeoutError) as exc:
            log.debug("database probe: %s", first_line(exc))
            return False
        return True


def first_line(exc: BaseException) -> str:
    """libpq's messages run over several lines ("This probably means..."): one is enough."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
