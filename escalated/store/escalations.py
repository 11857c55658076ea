"""Escalations: the create and transition jobs (run by the writer) and reads.

Every transition is a compare-and-set on ``status`` inside the write
transaction: whichever transition commits first wins, the others see a
changed status and fail with ``InvalidState``. That, not timing, is what
makes "resolved exactly once" true.
"""

from __future__ import annotations

import sqlite3

import attrs
import orjson

from escalated.domain.convert import content_to_json
from escalated.domain.models import (
    ACKNOWLEDGED,
    CANCELLED,
    OPEN,
    RESOLVED,
    Cancellation,
    Delivery,
    Escalation,
    Resolution,
)
from escalated.errors import InvalidState
from escalated.store.db import Database
from escalated.store.rows import ESCALATION_COLUMNS, ESCALATION_WIDTH, ESCALATION_WITH_HISTORY, escalation_with_history, to_json_text


@attrs.frozen
class IdempotencyRecord:
    workspace_id: str
    key: str
    body_sha256: str
    status: int
    response_json: bytes


@attrs.frozen
class Replay:
    """An earlier create with the same Idempotency-Key."""

    body_sha256: str
    status: int
    response_json: bytes


SELECT_IDEMPOTENCY = (
    "SELECT body_sha256, status, response_json FROM idempotency_keys WHERE workspace_id = ? AND key = ? AND created_ms > ?"
)
_INSERT_DELIVERY = (
    "INSERT INTO deliveries (id, escalation_id, kind, target, event, status, body, secret, next_attempt_ms, created_ms)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def insert_deliveries(conn: sqlite3.Connection, deliveries: list[Delivery]) -> None:
    conn.executemany(
        _INSERT_DELIVERY,
        [
            (d.id, d.escalation_id, d.kind, d.target, d.event, d.status, d.body, d.secret, d.next_attempt_ms, d.created_ms)
            for d in deliveries
        ],
    )


def _history(conn: sqlite3.Connection, escalation_id: str, event: str, by: str, at_ms: int) -> None:
    conn.execute(
        "INSERT INTO escalation_events (escalation_id, event, by, at_ms) VALUES (?, ?, ?, ?)",
        (escalation_id, event, by, at_ms),
    )


def create_escalation(
    conn: sqlite3.Connection,
    esc: Escalation,
    routes: tuple[str, ...],
    notifications: list[Delivery],
    idempotency: IdempotencyRecord | None,
    not_before_ms: int,
    content_json: dict | None = None,
) -> Replay | None:
    """Insert an escalation, its routes, history and notifications.

    With an idempotency record, an existing live key wins: nothing is
    inserted and the earlier answer is returned for the caller to replay.
    """
    if idempotency is not None:
        row = conn.execute(SELECT_IDEMPOTENCY, (idempotency.workspace_id, idempotency.key, not_before_ms)).fetchone()
        if row is not None:
            return Replay(body_sha256=row[0], status=row[1], response_json=bytes(row[2]))
        conn.execute(
            "INSERT OR REPLACE INTO idempotency_keys"
            " (workspace_id, key, body_sha256, status, response_json, escalation_id, created_ms)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                idempotency.workspace_id,
                idempotency.key,
                idempotency.body_sha256,
                idempotency.status,
                idempotency.response_json,
                esc.id,
                esc.created_ms,
            ),
        )
    conn.execute(
        f"INSERT INTO escalations ({ESCALATION_COLUMNS}) VALUES ({', '.join('?' * ESCALATION_WIDTH)})",
        (
            esc.id,
            esc.workspace_id,
            esc.status,
            esc.policy,
            esc.agent_id,
            esc.run_id,
            orjson.dumps(content_json if content_json is not None else content_to_json(esc.content)).decode(),
            esc.resume.url if esc.resume else None,
            esc.resume.secret if esc.resume else None,
            esc.created_ms,
            esc.created_by,
            esc.deadline_ms,
            esc.default_choice,
            None,
            None,
            None,
            None,
        ),
    )
    conn.executemany(
        "INSERT INTO escalation_routes (route, escalation_id) VALUES (?, ?)", [(r, esc.id) for r in routes]
    )
    _history(conn, esc.id, "created", esc.created_by, esc.created_ms)
    insert_deliveries(conn, notifications)
    return None


def _current_status(conn: sqlite3.Connection, escalation_id: str) -> str:
    row = conn.execute("SELECT status FROM escalations WHERE id = ?", (escalation_id,)).fetchone()
    return row[0] if row else "missing"


def acknowledge(conn: sqlite3.Connection, escalation_id: str, by: str, at_ms: int) -> bool:
    """Open → acknowledged. Idempotent: True only for the first acknowledger."""
    cur = conn.execute(
        "UPDATE escalations SET status = ?, acknowledged_by = ?, acknowledged_ms = ? WHERE id = ? AND status = ?",
        (ACKNOWLEDGED, by, at_ms, escalation_id, OPEN),
    )
    if cur.rowcount == 1:
        _history(conn, escalation_id, "acknowledged", by, at_ms)
        return True
    status = _current_status(conn, escalation_id)
    if status != ACKNOWLEDGED:
        raise InvalidState(f"escalation is {status}", current_status=status)
    return False


def _finish(conn: sqlite3.Connection, escalation_id: str, status: str, column: str, record) -> None:
    """Open/acknowledged → a terminal status: the compare-and-set every ending goes through."""
    cur = conn.execute(
        f"UPDATE escalations SET status = ?, {column} = ? WHERE id = ? AND status IN (?, ?)",
        (status, to_json_text(record), escalation_id, OPEN, ACKNOWLEDGED),
    )
    if cur.rowcount != 1:
        current = _current_status(conn, escalation_id)
        raise InvalidState(f"escalation is {current}", current_status=current)


def resolve(
    conn: sqlite3.Connection, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
) -> None:
    """Open/acknowledged → resolved, with its callback in the same transaction."""
    _finish(conn, escalation_id, RESOLVED, "resolution_json", resolution)
    _history(conn, escalation_id, history_event, resolution.answered_by, resolution.answered_at_ms)
    if callback is not None:
        insert_deliveries(conn, [callback])


def cancel(
    conn: sqlite3.Connection, escalation_id: str, cancellation: Cancellation, callback: Delivery | None = None
) -> None:
    """Open/acknowledged → cancelled, with its callback (if the policy asks for one) in the same transaction."""
    _finish(conn, escalation_id, CANCELLED, "cancellation_json", cancellation)
    _history(conn, escalation_id, "cancelled", cancellation.cancelled_by, cancellation.cancelled_at_ms)
    if callback is not None:
        insert_deliveries(conn, [callback])


# -- reads ----------------------------------------------------------------------

_ROUTED = " AND id IN (SELECT escalation_id FROM escalation_routes WHERE route IN ({}))"


async def get_escalation(
    db: Database, escalation_id: str, *, workspace_id: str | None, routes: tuple[str, ...] | None
) -> Escalation | None:
    """One escalation with its history; None when absent, in another workspace or not routed.

    ``workspace_id=None`` is the system's view (the SLA clock), across workspaces.
    """
    sql = f"SELECT {ESCALATION_WITH_HISTORY} FROM escalations WHERE id = ?"
    params: list = [escalation_id]
    if workspace_id is not None:
        sql += " AND workspace_id = ?"
        params.append(workspace_id)
    if routes is not None:
        sql += _ROUTED.format(", ".join("?" * len(routes)))
        params += routes
    row = await db.fetchone(sql, params)
    return None if row is None else escalation_with_history(row)


@attrs.frozen
class ListQuery:
    workspace_id: str
    routes: tuple[str, ...] | None
    status: str | None = None
    policy: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    limit: int = 50
    cursor: str | None = None
    ascending: bool = False


async def list_escalations(db: Database, q: ListQuery) -> tuple[list[Escalation], str | None]:
    """A page, newest first (ULIDs sort by time), and the cursor of the next."""
    sql = f"SELECT {ESCALATION_WITH_HISTORY} FROM escalations WHERE workspace_id = ?"
    params: list = [q.workspace_id]
    for column, value in (("status", q.status), ("policy", q.policy), ("agent_id", q.agent_id), ("run_id", q.run_id)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    if q.cursor:
        sql += " AND id > ?" if q.ascending else " AND id < ?"
        params.append(q.cursor)
    if q.routes is not None:
        sql += _ROUTED.format(", ".join("?" * len(q.routes)))
        params += q.routes
    sql += f" ORDER BY id {'ASC' if q.ascending else 'DESC'} LIMIT ?"
    params.append(q.limit + 1)
    rows = await db.fetchall(sql, params)
    page = [escalation_with_history(r) for r in rows[: q.limit]]
    return page, (page[-1].id if len(rows) > q.limit else None)


async def find_replay(db: Database, workspace_id: str, key: str, not_before_ms: int) -> Replay | None:
    row = await db.fetchone(SELECT_IDEMPOTENCY, (workspace_id, key, not_before_ms))
    return Replay(body_sha256=row[0], status=row[1], response_json=bytes(row[2])) if row else None


async def deadlines_between(db: Database, after_ms: int | None, until_ms: int, *, limit: int) -> list[tuple[int, str]]:
    """Live deadlines in (after, until], oldest first, from the partial index."""
    sql = (
        "SELECT deadline_ms, id FROM escalations WHERE deadline_ms IS NOT NULL AND status IN ('open', 'acknowledged')"
        " AND deadline_ms <= ?"
    )
    params: list = [until_ms]
    if after_ms is not None:
        sql += " AND deadline_ms > ?"
        params.append(after_ms)
    sql += " ORDER BY deadline_ms LIMIT ?"
    params.append(limit)
    return [tuple(r) for r in await db.fetchall(sql, params)]


async def get_many(db: Database, ids: list[str]) -> list[Escalation]:
    """Escalations by id with their history, for the system's batch paths."""
    out = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = await db.fetchall(f"SELECT {ESCALATION_WITH_HISTORY} FROM escalations WHERE id IN ({marks})", chunk)
        out.extend(escalation_with_history(r) for r in rows)
    return out


def resolve_many(conn: sqlite3.Connection, items: list[tuple[str, Resolution, str, Delivery | None]]) -> list[str]:
    """Resolve each in order; skip those a decision already took. Returns the ids resolved."""
    done = []
    for escalation_id, resolution, history_event, callback in items:
        try:
            resolve(conn, escalation_id, resolution, history_event, callback)
        except InvalidState:
            continue
        done.append(escalation_id)
    return done


async def count_by_status(db: Database, workspace_id: str, routes: tuple[str, ...] | None) -> dict[str, int]:
    """How many escalations of each status the caller may see (the web inbox's counts)."""
    sql = "SELECT status, COUNT(*) FROM escalations WHERE workspace_id = ?"
    params: list = [workspace_id]
    if routes is not None:
        sql += _ROUTED.format(", ".join("?" * len(routes)))
        params += routes
    return dict(await db.fetchall(sql + " GROUP BY status", params))
