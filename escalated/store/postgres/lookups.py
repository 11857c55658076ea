"""The rows every request reads (its API key or user, the policy it names),
kept per replica for at most ``TTL_S``.

Reading them from the pool cost a third of a replica's CPU per create
(two pool round trips). A change to any of them (a key added or revoked,
a user added or its token rotated, a policy set or deleted) is seen by
every replica within ``TTL_S`` whatever happens, and usually within
milliseconds:

- the replica that commits the change forgets everything at once;
- its commit group sends ``pg_notify(channel, 'config')`` and every other
  replica's doorbell forgets everything when it hears it (or reconnects);
- an entry is used for at most ``TTL_S`` counted from *before* the read
  that filled it, so a change committed after that read's snapshot is
  seen within ``TTL_S`` even if its notification were lost.

A read that was in flight when the cache was cleared is not kept (the
generation moved on), so a row read before a revocation never outlives
the revocation's notification. Misses (``None``) are never kept: a key or
policy created on one replica is usable on another at once. Concurrent
look-ups of one expired entry share one read: without that, every entry's
expiry sent all 48 requests in flight to the database at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from escalated.store.connector import NOT_KEPT

T = TypeVar("T")
TTL_S = 1.0  # the bound stated in docs/CONTRACT.md (#14)
MAX_ENTRIES = 4096  # tokens are random: an attacker's misses are not kept, live rows are few


class Lookups:
    def __init__(self, *, ttl_s: float = TTL_S, max_entries: int = MAX_ENTRIES) -> None:
        self._ttl_s = ttl_s
        self._max_entries = max_entries
        self._entries: dict[Hashable, tuple[float, object]] = {}
        self._reading: dict[Hashable, asyncio.Future[Any]] = {}
        self._generation = 0

    async def get(self, key: Hashable, read: Callable[[], Awaitable[T | None]]) -> T | None:
        started = time.monotonic()
        hit = self._entries.get(key)
        if hit is not None and started - hit[0] < self._ttl_s:
            return hit[1]  # type: ignore[return-value]  # one key is always read by the same read(): its T
        shared = self._reading.get(key)
        if shared is None:
            shared = asyncio.ensure_future(self._read(key, read, started=started, generation=self._generation))
            self._reading[key] = shared
            shared.add_done_callback(_retrieved)  # its error was handed to whoever still waited
        # shielded: a caller that goes away (its client hung up) leaves the read to the others
        return await asyncio.shield(shared)

    def peek(self, key: Hashable) -> object:
        """The entry ``get`` would answer at once, without reading: ``NOT_KEPT``
        when there is none younger than ``TTL_S``."""
        hit = self._entries.get(key)
        if hit is not None and time.monotonic() - hit[0] < self._ttl_s:
            return hit[1]
        return NOT_KEPT

    async def _read(
        self, key: Hashable, read: Callable[[], Awaitable[T | None]], *, started: float, generation: int
    ) -> T | None:
        try:
            value = await read()
        finally:
            if generation == self._generation:
                del self._reading[key]
        if value is not None and generation == self._generation:
            if len(self._entries) >= self._max_entries:
                self._entries.clear()
            self._entries[key] = (started, value)
        return value

    def forget(self) -> None:
        """After a change to keys, users or policies (ours or another replica's):
        reads in flight are neither kept nor joined."""
        self._generation += 1
        self._entries.clear()
        self._reading.clear()


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
