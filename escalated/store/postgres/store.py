"""The PostgreSQL store: the one store (sqlstore.py) over PostgreSQL's
connector (connector.py: the pool, the writer, the look-ups, the outage,
leading and following), and PostgreSQL's own create job (jobs.py)."""

from __future__ import annotations

from typing import Any

from escalated.domain.models import Delivery, Escalation
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.store.postgres import jobs
from escalated.store.postgres.connector import PostgresConnector
from escalated.store.sqlstore import SqlStore

class PostgresStore(SqlStore):
    shared = True

    def __init__(self, connector: PostgresConnector) -> None:
        super().__init__(connector)
        self._connector = connector
        self._writer = connector.writer

    @classmethod
    async def open(cls, url: str, *, durability: str = "full") -> PostgresStore:
        return cls(await PostgresConnector.open(url, durability=durability))

    @property
    def connector(self) -> PostgresConnector:
        """The replica's connections, for the tests that drive the change feed themselves."""
        return self._connector

    # -- escalations: writes ----------------------------------------------------

    async def create_escalation(
        self,
        *,
        escalation: Escalation,
        routes: tuple[str, ...],
        notifications: list[Delivery],
        idempotency: IdempotencyRecord | None,
        not_before_ms: int,
        content_json: dict[str, Any],
    ) -> Replay | None:
        return await self._writer.submit(
            jobs.create_escalation,
            escalation=escalation, routes=routes, notifications=notifications, idempotency=idempotency,
            not_before_ms=not_before_ms, content_json=content_json,
        )  # fmt: skip
