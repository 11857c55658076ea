"""One SLA clock across replicas: a session advisory lock decides who leads.

The lock is taken on a dedicated connection outside any pool, because a
session lock lives exactly as long as its connection: when a leader's
process dies (even ``kill -9``) the kernel closes its socket, PostgreSQL
ends the session and frees the lock, and a candidate's next try (every
``poll_s``) takes it over. Leadership is an economy, not the guarantee:
breaching stays a compare-and-set on ``status``, so two clocks overlapping
for a moment (a leader that has not yet noticed its session is gone)
still breach each escalation once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import psycopg

from escalated.store.postgres.outage import connect, first_line, lost_connection

log = logging.getLogger(__name__)
CLOCK_LOCK = 0x65736361636C6F63  # "escacloc": any fixed number shared by every replica
POLL_S = 1.0
CHECK_TIMEOUT_S = 3.0

Lead = Callable[[], Coroutine[Any, Any, None]]  # run as the leader's task


class Leadership:
    """Run ``lead()`` only while holding the lock; stop it the moment the lock may be lost."""

    def __init__(self, url: str, *, key: int = CLOCK_LOCK, poll_s: float = POLL_S) -> None:
        self._url = url
        self._key = key
        self._poll_s = poll_s
        self.leading = False

    async def run(self, stop: asyncio.Event, lead: Lead) -> None:
        failing = False  # one warning per outage, not one per attempt
        while not stop.is_set():
            try:
                async with await connect(self._url, autocommit=True) as conn:
                    failing = False
                    await self._candidate(conn, stop, lead)
            except psycopg.Error as exc:
                if not lost_connection(exc):
                    raise
                if not failing:
                    log.warning("clock leadership connection lost (%s); trying again every %g s", first_line(exc), self._poll_s)
                failing = True
            self.leading = False
            await _sleep_unless(stop, self._poll_s)

    async def _candidate(self, conn: psycopg.AsyncConnection, stop: asyncio.Event, lead: Lead) -> None:
        while not stop.is_set():
            row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,))).fetchone()
            if row is not None and row[0]:  # a SELECT of one value: always one row
                await self._lead(conn, stop, lead)
                return
            await _sleep_unless(stop, self._poll_s)

    async def _lead(self, conn: psycopg.AsyncConnection, stop: asyncio.Event, lead: Lead) -> None:
        log.info("this replica now runs the SLA clock")
        self.leading = True
        task = asyncio.create_task(lead(), name="escalated-clock-leader")
        try:
            while not stop.is_set() and not task.done():
                await _sleep_unless(stop, self._poll_s)
                # Raises once the session (and so the lock) is gone; a silent
                # network counts as gone too.
                await asyncio.wait_for(conn.execute("SELECT 1"), CHECK_TIMEOUT_S)
        except TimeoutError:
            log.warning("the leadership connection stopped answering; stepping down")
        finally:
            self.leading = False
            task.cancel()
            (outcome,) = await asyncio.gather(task, return_exceptions=True)
        if isinstance(outcome, Exception):  # the clock crashed: step down, another replica takes over
            log.error("the SLA clock stopped with an error; giving up leadership", exc_info=outcome)


async def _sleep_unless(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
