"""The PostgreSQL store: the one store (sqlstore.py) over PostgreSQL's
connector (connector.py: the pool, the writer, the look-ups, the outage,
leading and following, and PostgreSQL's own create job, jobs.py)."""

from __future__ import annotations

from escalated.store.postgres.connector import PostgresConnector
from escalated.store.sqlstore import SqlStore


class PostgresStore(SqlStore):
    shared = True

    def __init__(self, connector: PostgresConnector) -> None:
        super().__init__(connector)
        self._connector = connector

    @classmethod
    async def open(cls, url: str, *, durability: str = "full") -> PostgresStore:
        return cls(await PostgresConnector.open(url, durability=durability))

    @property
    def connector(self) -> PostgresConnector:
        """The replica's connections, for the tests that drive the change feed themselves."""
        return self._connector
