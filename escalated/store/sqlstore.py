"""The one store: ``Store`` written once, over a dialect's ``Connector``.

Each method exists once, in a part by area (admin.py: workspaces, keys,
users, policies; reads.py: escalations, deliveries and rules as read;
sessions.py: web sessions, sign-in and decision links);
``SqliteStore`` (sqlite/store.py) and ``PostgresStore``
(postgres/store.py) only open their connector and hand it here, with
what has not moved here yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from escalated.domain.records import Change
from escalated.store.admin import AdminPart
from escalated.store.base import Store
from escalated.store.connector import Connector
from escalated.store.reads import ReadsPart
from escalated.store.sessions import SessionsPart


class SqlStore(AdminPart, ReadsPart, SessionsPart, Store):
    def __init__(self, connector: Connector) -> None:
        self._c = connector
        self.shared = connector.shared

    async def lead(self, stop: asyncio.Event, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        await self._c.lead(stop, run)

    async def follow(self, stop: asyncio.Event, on_change: Callable[[Change], None]) -> None:
        await self._c.follow(stop, on_change)

    async def close(self) -> None:
        await self._c.close()
