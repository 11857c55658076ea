"""The outbox: deliveries owed (callbacks, notifications) and their attempts."""

from __future__ import annotations

import sqlite3

import orjson

from escalated.domain.convert import converter
from escalated.domain.models import CALLBACK, DELIVERED, FAILED, PENDING, Attempt, Delivery
from escalated.errors import InvalidState
from escalated.store.db import Database
from escalated.store.rows import DELIVERY_COLUMNS, delivery_from_row


async def pending_head(db: Database, *, limit: int, exclude: set[str]) -> list[Delivery]:
    """Pending deliveries in due order, skipping ``exclude`` (those in flight).

    One query answers both of the sender's questions: what is due now (a
    prefix of the list) and, from the first row that is not, when to wake.
    """
    sql = f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE status = ?"
    params: list = [PENDING]
    if exclude:
        sql += f" AND id NOT IN ({', '.join('?' * len(exclude))})"
        params += exclude
    sql += " ORDER BY next_attempt_ms LIMIT ?"
    params.append(limit)
    return [delivery_from_row(r) for r in await db.fetchall(sql, params)]


async def of_escalation(db: Database, escalation_id: str) -> list[Delivery]:
    """The callback first, then notifications, each in creation order."""
    rows = await db.fetchall(
        f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE escalation_id = ?"
        " ORDER BY kind != ?, created_ms, id",
        (escalation_id, CALLBACK),
    )
    return [delivery_from_row(r) for r in rows]


async def count_by_status(db: Database) -> dict[str, int]:
    rows = await db.fetchall("SELECT status, COUNT(*) FROM deliveries GROUP BY status")
    return dict(rows)


def record_attempt(
    conn: sqlite3.Connection, delivery_id: str, attempt: Attempt, status: str, next_attempt_ms: int | None
) -> None:
    # One statement on the sender's path: SQLite appends to the JSON array
    # itself instead of a read, a parse and a rewrite here.
    conn.execute(
        "UPDATE deliveries SET attempts_json = json_insert(attempts_json, '$[#]', json(?)),"
        " status = ?, next_attempt_ms = ? WHERE id = ?",
        (orjson.dumps(converter.unstructure(attempt)).decode(), status, next_attempt_ms if status == PENDING else None, delivery_id),
    )


def requeue_callback(conn: sqlite3.Connection, escalation_id: str, at_ms: int) -> Delivery:
    """Queue the escalation's callback again: same id, same bytes."""
    row = conn.execute(
        f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE escalation_id = ? AND kind = ?", (escalation_id, CALLBACK)
    ).fetchone()
    if row is None:
        raise InvalidState("this escalation has no callback to deliver (not resolved, or no resume target)")
    delivery = delivery_from_row(row)
    if delivery.status in (FAILED, DELIVERED) or delivery.next_attempt_ms is None or delivery.next_attempt_ms > at_ms:
        # A hand-made retry starts a fresh retry window.
        conn.execute(
            "UPDATE deliveries SET status = ?, next_attempt_ms = ?, created_ms = ? WHERE id = ?",
            (PENDING, at_ms, at_ms, delivery.id),
        )
    return delivery_from_row(
        conn.execute(f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE id = ?", (delivery.id,)).fetchone()
    )
