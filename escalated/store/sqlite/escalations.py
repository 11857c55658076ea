"""The create job on SQLite, run by the writer on the loop as a plain
function of the connection: the hot path, so no step more than it needs.
Every other write is written once for both dialects (store/writes.py);
a create differs on purpose: PostgreSQL inserts the escalation and its
routes in one statement and claims an Idempotency-Key across replicas
with an upsert (postgres/jobs.py), and writes the 'created' history
entry its replicas' feed reads, which SQLite keeps in the row (0010).
"""

from __future__ import annotations

import sqlite3
from typing import Any


from escalated.domain.models import Delivery, Escalation
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.store import queries
from escalated.store.rows import content_text, delivery_params, idempotency_params, replay_from_row, review_to_json

Q = queries.load("sqlite")
# Bound by position: SQLite's binding by name makes a string per parameter
# (~3 us for the insert's 16 on every create); the SQL stays named.
_CREATE_SQL = queries.positional(Q["create_escalation"])[0]
_REMEMBER_SQL, _remember_values = queries.positional(Q["remember_idempotency_key"])
_ROUTE_SQL = queries.positional(Q["add_route"])[0]
# The order ``_escalation_values`` writes the insert's values in, and the
# one of the other positional statements: checked here, once, against the SQL.
_CREATE_ORDER = (
    "id", "workspace_id", "status", "policy", "agent_id", "run_id", "content_json", "resume_url", "resume_secret",
    "created_ms", "created_by", "deadline_ms", "default_choice", "review_json", "remind_ms", "nudge_ms",
)  # fmt: skip
for _sql, _order in (
    (Q["create_escalation"], _CREATE_ORDER),
    (Q["add_route"], ("route", "escalation_id")),
):
    if tuple(queries.parameter_names(_sql)) != _order:
        raise RuntimeError(f"the SQL's parameters are {queries.parameter_names(_sql)}, not {_order}")


def create_escalation(
    conn: sqlite3.Connection,
    *,
    escalation: Escalation,
    routes: tuple[str, ...],
    notifications: list[Delivery],
    idempotency: IdempotencyRecord | None,
    not_before_ms: int,
    content_json: bytes | dict[str, Any] | None = None,
) -> Replay | None:
    """Insert an escalation, its routes and notifications. Its history's
    first entry, 'created', is the row's own created_by and created_ms (the
    history read adds it: sql/sqlite.sql's escalation_with_history).

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
    conn.execute(_CREATE_SQL, _escalation_values(esc, content_json))
    if len(routes) == 1:  # the usual policy (anyone, or one reviewer): no executemany for one row
        conn.execute(_ROUTE_SQL, (routes[0], esc.id))
    else:
        conn.executemany(_ROUTE_SQL, [(r, esc.id) for r in routes])
    if notifications:
        conn.executemany(Q["add_delivery"], [delivery_params(d) for d in notifications])
    return None


def _escalation_values(esc: Escalation, content_json: bytes | dict[str, Any] | None) -> tuple[Any, ...]:
    """``escalation_params``' values in ``_CREATE_ORDER``, without the dict between."""
    resume = esc.resume
    return (
        esc.id, esc.workspace_id, esc.status, esc.policy, esc.agent_id, esc.run_id, content_text(esc, content_json),
        resume.url if resume else None, resume.secret if resume else None, esc.created_ms, esc.created_by,
        esc.deadline_ms, esc.default_choice, review_to_json(esc.review), esc.remind_ms, esc.nudge_ms,
    )  # fmt: skip
