"""The create job on PostgreSQL, run by ``PgWriter`` in commit groups.

Every other write is written once for both dialects (store/writes.py); a
create differs on purpose: the escalation and all its routes go in one
statement (each statement a job sends costs the writer ~50 us of Python),
and an Idempotency-Key is claimed with an upsert, so concurrent creates
with one key on different replicas make one escalation.
"""

from __future__ import annotations

from typing import Any

from escalated.domain.models import Delivery, Escalation
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.store import queries
from escalated.store.postgres.writer import GroupTx
from escalated.store.rows import delivery_params, escalation_params, idempotency_params, replay_from_row

Q = queries.load("postgres")


async def create_escalation(
    tx: GroupTx,
    *,
    escalation: Escalation,
    routes: tuple[str, ...],
    notifications: list[Delivery],
    idempotency: IdempotencyRecord | None,
    not_before_ms: int,
    content_json: bytes | dict[str, Any] | None,
) -> Replay | None:
    """Insert an escalation with its routes, history and notifications; a
    live Idempotency-Key (from any replica) wins and is returned instead."""
    esc = escalation
    if idempotency is not None and not await _claim_key(tx, esc=esc, idem=idempotency, not_before_ms=not_before_ms):
        params = {"workspace_id": idempotency.workspace_id, "key": idempotency.key, "not_before_ms": not_before_ms}
        cur = await tx.execute(Q["find_replay"], params)
        row = await cur.fetchone()
        assert row is not None  # the key is live: _claim_key found it
        return replay_from_row(row)
    params = escalation_params(esc, content_json=content_json)
    params["routes"] = list(routes)
    await tx.execute(Q["create_escalation"], params)
    await tx.history(escalation_id=esc.id, event="created", by=esc.created_by, at_ms=esc.created_ms)
    await tx.run_many(Q["add_delivery"], [delivery_params(d) for d in notifications])
    return None


async def _claim_key(tx: GroupTx, *, esc: Escalation, idem: IdempotencyRecord, not_before_ms: int) -> bool:
    """INSERT ... ON CONFLICT: True when this create owns the key now."""
    params = idempotency_params(idem, escalation_id=esc.id, created_ms=esc.created_ms)
    params["response_json"] = bytes(idem.response_json).decode()
    params["not_before_ms"] = not_before_ms
    cur = await tx.execute(Q["remember_idempotency_key"], params)
    return await cur.fetchone() is not None
