"""The one store: ``Store`` written once, over a dialect's ``Connector``.

Each method exists once, in a part by area (admin.py: workspaces, keys,
users, policies; reads.py: escalations, deliveries and rules as read;
sessions.py: web sessions, sign-in and decision links; writes.py:
transitions, the outbox's writes, reviewer operations and quorum votes).
``SqliteStore`` (sqlite/store.py) and ``PostgresStore`` (postgres/store.py)
open their connector and hand it here. The create's job is the connector's,
the one write whose steps differ on purpose (sqlite/escalations.py,
postgres/jobs.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from escalated.domain.models import Delivery, Escalation
from escalated.domain.records import Change, IdempotencyRecord, Replay
from escalated.store.admin import AdminPart
from escalated.store.base import Store
from escalated.store.connector import Connector
from escalated.store.reads import ReadsPart
from escalated.store.sessions import SessionsPart
from escalated.store.writes import WritesPart


class SqlStore(AdminPart, ReadsPart, SessionsPart, WritesPart, Store):
    def __init__(self, connector: Connector) -> None:
        self._c = connector
        self.shared = connector.shared

    def create_escalation(
        self,
        *,
        escalation: Escalation,
        routes: tuple[str, ...],
        notifications: list[Delivery],
        idempotency: IdempotencyRecord | None,
        not_before_ms: int,
        content_json: bytes | dict[str, Any] | None,
    ) -> Awaitable[Replay | None]:
        """Each dialect's own job (sqlite/escalations.py, postgres/jobs.py), run
        by its writer: what the connector hands back, awaited by the caller (no
        coroutine of its own in between on every create)."""
        return self._c.create_escalation(
            escalation=escalation, routes=routes, notifications=notifications, idempotency=idempotency,
            not_before_ms=not_before_ms, content_json=content_json,
        )  # fmt: skip

    async def lead(self, stop: asyncio.Event, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        await self._c.lead(stop, run)

    async def follow(self, stop: asyncio.Event, on_change: Callable[[Change], None]) -> None:
        await self._c.follow(stop, on_change)

    async def close(self) -> None:
        await self._c.close()
