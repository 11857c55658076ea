"""The outbox on SQLite: deliveries owed (callbacks, notifications) and
their attempts. ``SqliteStore`` (store/sqlite/store.py) is the only caller."""

from __future__ import annotations

import sqlite3

import orjson

from escalated.domain.convert import converter
from escalated.domain.models import DELIVERED, FAILED, PENDING, Attempt, Delivery
from escalated.errors import InvalidState
from escalated.store import queries
from escalated.store.rows import delivery_from_row

Q = queries.load("sqlite")


def record_attempt(
    conn: sqlite3.Connection, *, delivery_id: str, attempt: Attempt, status: str, next_attempt_ms: int | None
) -> None:
    attempt_json = orjson.dumps(converter.unstructure(attempt)).decode()
    conn.execute(Q["record_attempt"], (attempt_json, status, next_attempt_ms if status == PENDING else None, delivery_id))


def defer_deliveries(conn: sqlite3.Connection, *, delivery_ids: list[str], until_ms: int) -> None:
    conn.execute(Q["defer_deliveries"], (until_ms, orjson.dumps(delivery_ids).decode()))


def requeue_callback(conn: sqlite3.Connection, *, escalation_id: str, at_ms: int) -> Delivery:
    """Queue the escalation's callback again: same id, same bytes."""
    row = conn.execute(Q["callback_of_escalation"], (escalation_id,)).fetchone()
    if row is None:
        raise InvalidState("this escalation has no callback to deliver (not resolved, or no resume target)")
    delivery = delivery_from_row(row)
    if delivery.status in (FAILED, DELIVERED) or delivery.next_attempt_ms is None or delivery.next_attempt_ms > at_ms:
        conn.execute(Q["requeue_delivery"], (at_ms, at_ms, delivery.id))
    return delivery_from_row(conn.execute(Q["get_delivery"], (delivery.id,)).fetchone())
