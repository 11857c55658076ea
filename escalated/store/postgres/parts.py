"""What the query mixin of ``PostgresStore`` (reviewerops.py) uses of it,
declared so the mixin is checked against it. ``PostgresStore`` sets the
attributes and defines the reads."""

from __future__ import annotations

from typing import Any

from escalated.store.postgres.writer import PgWriter

Params = tuple[Any, ...] | list[Any]


class StoreParts:
    _writer: PgWriter

    async def _fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # PostgresStore's

    async def _fetchone(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        raise NotImplementedError  # PostgresStore's
