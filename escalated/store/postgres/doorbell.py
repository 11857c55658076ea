"""Hearing other replicas' commits: LISTEN on a dedicated connection.

Every commit group of every replica ends with one ``pg_notify`` (see
writer.py). The notification carries nothing: it is a doorbell, and what
rang it is re-read from the tables, so a missed or merged ring loses
nothing. After (re)connecting it rings once, for whatever was committed
while it was not listening.

A ring whose payload is ``'config'`` (keys, users or policies changed) also
calls ``on_config``, as does every (re)connection: the replica forgets its
cached look-ups (lookups.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import psycopg

from escalated.store.postgres.outage import connect, first_line, lost_connection
from escalated.store.postgres.writer import CONFIG_CHANGED, DOORBELL_CHANNEL

log = logging.getLogger(__name__)
LISTEN_POLL_S = 0.5  # how often a quiet listener looks at ``stop``
RECONNECT_S = 1.0


class Doorbell:
    def __init__(
        self,
        url: str,
        *,
        on_ring: Callable[[], None],
        on_config: Callable[[], None] = lambda: None,
        channel: str = DOORBELL_CHANNEL,
    ) -> None:
        self._url = url
        self._on_ring = on_ring
        self._on_config = on_config
        self._channel = channel
        self.listening = asyncio.Event()  # set while subscribed (tests wait for it)

    async def run(self, stop: asyncio.Event) -> None:
        failing = False  # one warning per outage, not one per reconnect attempt
        while not stop.is_set():
            try:
                await self._listen(stop)
            except psycopg.Error as exc:
                if not lost_connection(exc):
                    raise
                self.listening.clear()
                if not failing:
                    log.warning("doorbell connection lost (%s); reconnecting every %g s", first_line(exc), RECONNECT_S)
                failing = True
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), RECONNECT_S)
            else:
                failing = False

    async def _listen(self, stop: asyncio.Event) -> None:
        async with await connect(self._url, autocommit=True) as conn:
            await conn.execute(f"LISTEN {self._channel}")
            self.listening.set()
            self._on_config()  # for what was committed while nobody listened
            self._on_ring()
            while not stop.is_set():
                # Every notification is looked at (a 'config' one must not be
                # lost behind another); rings merge in the change feed.
                async for notify in conn.notifies(timeout=LISTEN_POLL_S):
                    if notify.payload == CONFIG_CHANGED:
                        self._on_config()
                    self._on_ring()
        self.listening.clear()
