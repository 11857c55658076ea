"""The create job on SQLite, run by the writer on the loop as a plain
function of the connection: the hot path, so no step more than it needs.
Every other write is written once for both dialects (store/writes.py);
a create differs on purpose: PostgreSQL inserts the escalation and its
routes in one statement and claims an Idempotency-Key across replicas
with an upsert (postgres/jobs.py).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from escalated.domain.models import Delivery, Escalation
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.store import queries
from escalated.store.rows import delivery_params, escalation_params, idempotency_params, replay_from_row

Q = queries.load("sqlite")
# Bound by position: SQLite's binding by name makes a string per parameter
# (~3 us for the insert's 16 on every create); the SQL stays named.
_CREATE_SQL, _create_values = queries.positional(Q["create_escalation"])
_REMEMBER_SQL, _remember_values = queries.positional(Q["remember_idempotency_key"])
_ROUTE_SQL = queries.positional(Q["add_route"])[0]


def _history(conn: sqlite3.Connection, *, escalation_id: str, event: str, by: str, at_ms: int) -> None:
    conn.execute(Q["add_history"], {"escalation_id": escalation_id, "event": event, "by": by, "at_ms": at_ms})


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
        params = idempotency_params(idempotency, escalation_id=esc.id, created_ms=esc.created_ms)
        conn.execute(_REMEMBER_SQL, _remember_values(params))
    conn.execute(_CREATE_SQL, _create_values(escalation_params(esc, content_json=content_json)))
    conn.executemany(_ROUTE_SQL, [(r, esc.id) for r in routes])  # (route, escalation_id)
    _history(conn, escalation_id=esc.id, event="created", by=esc.created_by, at_ms=esc.created_ms)
    conn.executemany(Q["add_delivery"], [delivery_params(d) for d in notifications])
    return None
