"""The SQLite store: the one store (sqlstore.py) over SQLite's connector
(connector.py: one file, the group-commit writer, the readers, the look-ups
on the loop, and SQLite's own create job, escalations.py)."""

from __future__ import annotations

from pathlib import Path

from escalated.store.sqlite.connector import SqliteConnector
from escalated.store.sqlstore import SqlStore
from escalated.store.sqlite.db import Database


class SqliteStore(SqlStore):
    def __init__(self, db: Database) -> None:
        connector = SqliteConnector(db)
        super().__init__(connector)
        self._db = db

    @classmethod
    async def open(cls, path: Path | str, *, durability: str = "full") -> SqliteStore:
        return cls(await Database.open(path, durability=durability))

    @property
    def database(self) -> Database:
        """The connections themselves, for the tests and benchmarks that measure the writer."""
        return self._db
