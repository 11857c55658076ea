"""The PostgreSQL store's write jobs, run by ``PgWriter`` in commit groups.

Each is ``async def job(tx, *, ...)`` over a ``GroupTx``, its arguments
keyword-only as the SQLite store's are. Their SQL is the named queries of
``sql/postgres.sql``; rows become objects in rows.py.
Transitions are compare-and-set on ``status``: under READ COMMITTED an
update that meets a concurrent one waits for its COMMIT and re-checks the
condition, so whichever replica commits first wins and the other raises
``InvalidState``: resolved exactly once, across replicas.
"""

from __future__ import annotations

from typing import Any

import orjson

from escalated.domain.convert import content_to_json, converter
from escalated.domain.models import ACKNOWLEDGED, DELIVERED, FAILED, PENDING, Attempt, Cancellation, Delivery, Escalation, Resolution
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.errors import InvalidState
from escalated.store import queries
from escalated.store.postgres.writer import GroupTx
from escalated.store.rows import delivery_from_row, replay_from_row, review_to_json, to_json_text

Q = queries.load("postgres")


async def add_deliveries(tx: GroupTx, *, deliveries: list[Delivery]) -> None:
    if deliveries:
        async with tx.conn.cursor() as cur:
            await cur.executemany(
                Q["add_delivery"],
                [
                    (d.id, d.escalation_id, d.kind, d.target, d.event, d.status, d.body, d.secret, d.next_attempt_ms, d.created_ms)
                    for d in deliveries
                ],
            )


def add_history(tx: GroupTx, *, escalation_id: str, event: str, by: str, at_ms: int) -> None:
    tx.write_last((escalation_id, event, by, at_ms))  # numbered at COMMIT (see writer.LastRows)


async def create_escalation(
    tx: GroupTx,
    *,
    escalation: Escalation,
    routes: tuple[str, ...],
    notifications: list[Delivery],
    idempotency: IdempotencyRecord | None,
    not_before_ms: int,
    content_json: dict[str, Any] | None,
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
    content = content_json if content_json is not None else content_to_json(esc.content)
    await tx.execute(
        Q["create_escalation"],
        (
            esc.id, esc.workspace_id, esc.status, esc.policy, esc.agent_id, esc.run_id, orjson.dumps(content).decode(),
            esc.resume.url if esc.resume else None, esc.resume.secret if esc.resume else None,
            esc.created_ms, esc.created_by, esc.deadline_ms, esc.default_choice,
            review_to_json(esc.review), esc.remind_ms, esc.nudge_ms, list(routes),
        ),
    )  # fmt: skip
    add_history(tx, escalation_id=esc.id, event="created", by=esc.created_by, at_ms=esc.created_ms)
    await add_deliveries(tx, deliveries=notifications)
    return None


async def _claim_key(tx: GroupTx, *, esc: Escalation, idem: IdempotencyRecord, not_before_ms: int) -> bool:
    """INSERT ... ON CONFLICT: True when this create owns the key now."""
    cur = await tx.execute(
        Q["remember_idempotency_key"],
        (
            idem.workspace_id, idem.key, idem.body_sha256, idem.status, bytes(idem.response_json).decode(),
            esc.id, esc.created_ms, not_before_ms,
        ),
    )  # fmt: skip
    return await cur.fetchone() is not None


async def _current_status(tx: GroupTx, *, escalation_id: str) -> str:
    row = await (await tx.execute(Q["escalation_status"], (escalation_id,))).fetchone()
    return row[0] if row else "missing"


async def acknowledge(tx: GroupTx, *, escalation_id: str, by: str, at_ms: int) -> bool:
    """Open → acknowledged. Idempotent: True only for the first acknowledger."""
    if await tx.changed(Q["acknowledge"], (by, at_ms, escalation_id)) == 1:
        add_history(tx, escalation_id=escalation_id, event="acknowledged", by=by, at_ms=at_ms)
        return True
    status = await _current_status(tx, escalation_id=escalation_id)
    if status != ACKNOWLEDGED:
        raise InvalidState(f"escalation is {status}", current_status=status)
    return False


async def _finish(tx: GroupTx, *, query: str, escalation_id: str, record: Resolution | Cancellation) -> None:
    if await tx.changed(Q[query], (to_json_text(record), escalation_id)) != 1:
        current = await _current_status(tx, escalation_id=escalation_id)
        raise InvalidState(f"escalation is {current}", current_status=current)


async def resolve(
    tx: GroupTx, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
) -> None:
    await _finish(tx, query="resolve", escalation_id=escalation_id, record=resolution)
    _resolved(tx, escalation_id=escalation_id, resolution=resolution, history_event=history_event)
    if callback is not None:
        await add_deliveries(tx, deliveries=[callback])


def _resolved(tx: GroupTx, *, escalation_id: str, resolution: Resolution, history_event: str) -> None:
    add_history(
        tx, escalation_id=escalation_id, event=history_event, by=resolution.answered_by, at_ms=resolution.answered_at_ms
    )


async def resolve_many(tx: GroupTx, *, items: list[Any]) -> list[str]:
    """Resolve each in order, skipping those already ended; the ids resolved."""
    done = []
    for escalation_id, resolution, history_event, callback in items:
        if await tx.changed(Q["resolve"], (to_json_text(resolution), escalation_id)) != 1:
            continue
        _resolved(tx, escalation_id=escalation_id, resolution=resolution, history_event=history_event)
        if callback is not None:
            await add_deliveries(tx, deliveries=[callback])
        done.append(escalation_id)
    return done


async def cancel(
    tx: GroupTx, *, escalation_id: str, cancellation: Cancellation, callback: Delivery | None = None
) -> None:
    await _finish(tx, query="cancel", escalation_id=escalation_id, record=cancellation)
    add_history(
        tx, escalation_id=escalation_id, event="cancelled", by=cancellation.cancelled_by, at_ms=cancellation.cancelled_at_ms
    )
    if callback is not None:
        await add_deliveries(tx, deliveries=[callback])


# -- the outbox -------------------------------------------------------------------


async def claim_deliveries(tx: GroupTx, *, delivery_ids: list[str], at_ms: int, lease_ms: int) -> dict[str, int | None]:
    """The ids this replica won, each with its fencing token (the lease's end)."""
    token = at_ms + lease_ms
    cur = await tx.execute(Q["claim_deliveries"], (token, delivery_ids, at_ms, at_ms))
    return {row[0]: token for row in await cur.fetchall()}


async def record_attempt(
    tx: GroupTx, *, delivery_id: str, token: int, attempt: Attempt, status: str, next_attempt_ms: int | None
) -> bool:
    """False when the claim was fenced out (its lease lapsed and was re-claimed)."""
    changed = await tx.changed(
        Q["record_attempt"],
        (
            orjson.dumps(converter.unstructure(attempt)).decode(), status,
            next_attempt_ms if status == PENDING else None, delivery_id, token,
        ),
    )  # fmt: skip
    return changed == 1


async def defer_deliveries(tx: GroupTx, *, delivery_ids: list[str], until_ms: int) -> None:
    await tx.execute(Q["defer_deliveries"], (until_ms, delivery_ids))


async def requeue_callback(tx: GroupTx, *, escalation_id: str, at_ms: int) -> Delivery:
    """Queue the escalation's callback again: same id, same bytes."""
    row = await (await tx.execute(Q["callback_of_escalation"], (escalation_id,))).fetchone()
    if row is None:
        raise InvalidState("this escalation has no callback to deliver (not resolved, or no resume target)")
    delivery = delivery_from_row(row)
    if delivery.status in (FAILED, DELIVERED) or delivery.next_attempt_ms is None or delivery.next_attempt_ms > at_ms:
        await tx.execute(Q["requeue_delivery"], (at_ms, at_ms, delivery.id))  # a fresh retry window
    row = await (await tx.execute(Q["get_delivery"], (delivery.id,))).fetchone()
    assert row is not None  # read above, in this transaction
    return delivery_from_row(row)
