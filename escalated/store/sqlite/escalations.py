"""Escalations on SQLite: the create and transition jobs (run by the writer). ``SqliteStore`` (store/sqlite/store.py) is their only caller.

Every transition is a compare-and-set on ``status`` inside the write
transaction: whichever transition commits first wins, the others see a
changed status and fail with ``InvalidState``. That, not timing, is what
makes "resolved exactly once" true.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from escalated.domain.convert import content_to_json
from escalated.domain.models import ACKNOWLEDGED, Cancellation, Delivery, Escalation, Resolution
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.errors import InvalidState
from escalated.store import queries
from escalated.store.rows import replay_from_row, review_to_json, to_json_text

Q = queries.load("sqlite")


def insert_deliveries(conn: sqlite3.Connection, deliveries: list[Delivery]) -> None:
    conn.executemany(
        Q["add_delivery"],
        [
            (d.id, d.escalation_id, d.kind, d.target, d.event, d.status, d.body, d.secret, d.next_attempt_ms, d.created_ms)
            for d in deliveries
        ],
    )


def _history(conn: sqlite3.Connection, *, escalation_id: str, event: str, by: str, at_ms: int) -> None:
    conn.execute(Q["add_history"], (escalation_id, event, by, at_ms))


def create_escalation(
    conn: sqlite3.Connection,
    *,
    escalation: Escalation,
    routes: tuple[str, ...],
    notifications: list[Delivery],
    idempotency: IdempotencyRecord | None,
    not_before_ms: int,
    content_json: dict[str, Any] | None = None,
) -> Replay | None:
    """Insert an escalation, its routes, history and notifications.

    With an idempotency record, an existing live key wins: nothing is
    inserted and the earlier answer is returned for the caller to replay.
    """
    esc = escalation
    if idempotency is not None:
        params = {"workspace_id": idempotency.workspace_id, "key": idempotency.key, "not_before_ms": not_before_ms}
        row = conn.execute(Q["find_replay"], params).fetchone()
        if row is not None:
            return replay_from_row(row)
        conn.execute(
            Q["remember_idempotency_key"],
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
        Q["create_escalation"],
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
            review_to_json(esc.review),
            esc.remind_ms,
            esc.nudge_ms,
        ),
    )
    conn.executemany(Q["add_route"], [(r, esc.id) for r in routes])
    _history(conn, escalation_id=esc.id, event="created", by=esc.created_by, at_ms=esc.created_ms)
    insert_deliveries(conn, notifications)
    return None


def _current_status(conn: sqlite3.Connection, escalation_id: str) -> str:
    row = conn.execute(Q["escalation_status"], (escalation_id,)).fetchone()
    return row[0] if row else "missing"


def acknowledge(conn: sqlite3.Connection, *, escalation_id: str, by: str, at_ms: int) -> bool:
    """Open → acknowledged. Idempotent: True only for the first acknowledger."""
    if conn.execute(Q["acknowledge"], (by, at_ms, escalation_id)).rowcount == 1:
        _history(conn, escalation_id=escalation_id, event="acknowledged", by=by, at_ms=at_ms)
        return True
    status = _current_status(conn, escalation_id)
    if status != ACKNOWLEDGED:
        raise InvalidState(f"escalation is {status}", current_status=status)
    return False


def _finish(conn: sqlite3.Connection, *, query: str, escalation_id: str, record: Resolution | Cancellation) -> None:
    """Open/acknowledged → a terminal status: the compare-and-set every ending goes through."""
    if conn.execute(Q[query], (to_json_text(record), escalation_id)).rowcount != 1:
        current = _current_status(conn, escalation_id)
        raise InvalidState(f"escalation is {current}", current_status=current)


def resolve(
    conn: sqlite3.Connection, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
) -> None:
    """Open/acknowledged → resolved, with its callback in the same transaction."""
    _finish(conn, query="resolve", escalation_id=escalation_id, record=resolution)
    _history(
        conn, escalation_id=escalation_id, event=history_event, by=resolution.answered_by, at_ms=resolution.answered_at_ms
    )
    if callback is not None:
        insert_deliveries(conn, [callback])


def resolve_many(conn: sqlite3.Connection, *, items: list[tuple[str, Resolution, str, Delivery | None]]) -> list[str]:
    """Resolve each in order; skip those a decision already took. Returns the ids resolved."""
    done = []
    for escalation_id, resolution, history_event, callback in items:
        try:
            resolve(
                conn, escalation_id=escalation_id, resolution=resolution, history_event=history_event, callback=callback
            )
        except InvalidState:
            continue
        done.append(escalation_id)
    return done


def cancel(conn: sqlite3.Connection, *, escalation_id: str, cancellation: Cancellation, callback: Delivery | None) -> None:
    """Open/acknowledged → cancelled, with its callback (if the policy asks for one) in the same transaction."""
    _finish(conn, query="cancel", escalation_id=escalation_id, record=cancellation)
    _history(
        conn, escalation_id=escalation_id, event="cancelled", by=cancellation.cancelled_by, at_ms=cancellation.cancelled_at_ms
    )
    if callback is not None:
        insert_deliveries(conn, [callback])


