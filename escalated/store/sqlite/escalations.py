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

import orjson

from escalated.domain.convert import content_to_json
from escalated.domain.models import Delivery, Escalation
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.store import queries
from escalated.store.rows import delivery_params, replay_from_row, review_to_json

Q = queries.load("sqlite")


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
    conn.executemany(Q["add_delivery"], [delivery_params(d) for d in notifications])
    return None
