"""What other replicas committed, as it happens: the doorbell's reader.

Every commit group rings the doorbell (writer.py); a ring makes the feed
read the history entries committed after the last one it handed on, in
commit order (history numbers rise in commit order, see
``writer.LastRows``), and hand each one on with its escalation as it is
now. Rings that arrive while a read runs are merged into one more read.
A read the database does not answer (an outage) is tried again every
``RETRY_S``; nothing is skipped, since the next read starts after the last
entry handed on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from escalated.domain.records import Change
from escalated.errors import DatabaseUnavailable

if TYPE_CHECKING:
    from escalated.store.postgres.connector import PostgresConnector

log = logging.getLogger(__name__)
BATCH = 500
RETRY_S = 0.5


class ChangeFeed:
    def __init__(self, store: PostgresConnector, *, on_change: Callable[[Change], None]) -> None:
        self._store = store
        self._on_change = on_change
        self._rung = asyncio.Event()
        self._retry: asyncio.TimerHandle | None = None
        self.seq = 0  # the last entry handed on

    async def start(self) -> ChangeFeed:
        """Begin after what is already committed: history is not replayed."""
        self.seq = await self._store.last_change()
        return self

    def ring(self) -> None:
        self._rung.set()

    async def run(self, stop: asyncio.Event) -> None:
        stopping = asyncio.ensure_future(stop.wait())
        rung: asyncio.Future[Any] | None = None
        try:
            while not stop.is_set():
                rung = asyncio.ensure_future(self._rung.wait())
                await asyncio.wait({rung, stopping}, return_when=asyncio.FIRST_COMPLETED)
                rung.cancel()
                self._rung.clear()
                if not stop.is_set():
                    await self._catch_up_or_retry()
        finally:
            if self._retry is not None:
                self._retry.cancel()
            # asyncio.wait leaves its futures running when the caller is
            # cancelled: without this, every stop left a pending waiter
            # behind ("Task was destroyed but it is pending!" at loop close).
            # No await here: a task collected after its loop closed runs this
            # too, and cancelling then is refused by the closed loop.
            with contextlib.suppress(RuntimeError):
                for waiter in (stopping, rung):
                    if waiter is not None:
                        waiter.cancel()

    async def _catch_up_or_retry(self) -> None:
        try:
            await self.catch_up()
        except DatabaseUnavailable:  # the store has said so once; ring again shortly
            if self._retry is None:
                self._retry = asyncio.get_running_loop().call_later(RETRY_S, self._retry_now)

    def _retry_now(self) -> None:
        self._retry = None
        self.ring()

    async def catch_up(self) -> None:
        """Hand on everything committed after ``seq``."""
        while True:
            changes = await self._store.changes_after(seq=self.seq, limit=BATCH)
            for change in changes:
                self.seq = change.seq
                try:
                    self._on_change(change)
                except Exception:  # one broken listener must not stop the feed
                    log.exception("change listener failed on %s", change.event)
            if len(changes) < BATCH:
                return
