"""The rows every request reads on SQLite (its API key or user, the policy
it names, the policy's active rules), kept until the database changes.

SQLite's ``PRAGMA data_version``, asked on the look-up connection, changes
whenever any other connection has committed: this server's writer, or
another process (the CLI revoking a key while ``serve`` runs). Every
look-up asks it first and forgets everything when it moved, so a request
sees every change committed before it asked, as when each request read the
rows itself: a revocation or a policy change applies to the next request.
Under load the writer commits one group of creates every few
milliseconds, and each group costs one read of each row instead of one per
request.

Asking is itself a statement (~2 us), so it is asked once per turn of the
event loop, not once per look-up: the answer serves the callbacks already
queued when it was asked, and a look-up in any callback queued after it
asks again. That keeps the guarantee above: a request's look-up runs in a
callback queued after its bytes were read, so either after the next ask or
in a turn whose ask came after the bytes arrived, itself after any commit
the client had seen before sending them; likewise a task resumed by a
commit of our writer.

A row that is absent is kept too (the next commit forgets it as well); at
``MAX_ENTRIES`` everything is forgotten, so tokens nobody holds cannot
grow the memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import TypeVar

from escalated.store.connector import NOT_KEPT

T = TypeVar("T")
MAX_ENTRIES = 4096
_ABSENT = object()


class UntilChanged:
    def __init__(self, data_version: Callable[[], int], *, max_entries: int = MAX_ENTRIES) -> None:
        self._data_version = data_version
        self._max_entries = max_entries
        self._version: int | None = None
        self._entries: dict[Hashable, object] = {}
        self._asked = False

    def get(self, key: Hashable, read: Callable[[], T]) -> T:
        """``read()``'s answer for ``key``, read again once anything committed since."""
        if not self._asked:
            self._ask()
        value = self._entries.get(key, _ABSENT)
        if value is _ABSENT:
            # Read after the version was asked: a commit in between makes the
            # next look-up forget it, never the other way round.
            value = read()
            if len(self._entries) >= self._max_entries:
                self._entries.clear()
            self._entries[key] = value
        return value  # type: ignore[return-value]

    def peek(self, key: Hashable) -> object:
        """What ``get`` would answer for ``key`` without reading: ``NOT_KEPT``
        when it would read (nothing kept, or the database changed since)."""
        if not self._asked:
            self._ask()
        return self._entries.get(key, NOT_KEPT)

    def _ask(self) -> None:
        self._asked = True
        asyncio.get_running_loop().call_soon(self._ask_again)
        version = self._data_version()
        if version != self._version:
            self._entries.clear()
            self._version = version

    def _ask_again(self) -> None:
        self._asked = False
