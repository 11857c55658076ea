"""Reviewer operations on PostgreSQL (CONTRACT §15): quorum votes and the SLA
clock's reminders and levels, as write jobs of ``PgWriter``.

Two last votes on two replicas at once: each job first locks the live row
(``approvals_of_live`` is ``FOR UPDATE``), so the second waits for the
first's COMMIT and then reads its vote; the quorum is met once, by the later
one. A breach and a last vote meet at the same row: whichever commits first
ends it and the other finds it no longer live (``InvalidState`` / skipped).
"""

from __future__ import annotations

from escalated.domain.models import Approval, Delivery, Resolution
from escalated.domain.review import Nudge
from escalated.errors import AlreadyApproved, InvalidState
from escalated.store.postgres.jobs import Q, add_deliveries, add_history, resolve
from escalated.store.postgres.writer import GroupTx
from escalated.store.rows import approvals_from_json, approvals_to_json


async def approve(
    tx: GroupTx, *, escalation_id: str, approval: Approval, quorum: int, resolution: Resolution, callback: Delivery | None
) -> tuple[Approval, ...]:
    """Add a vote; when it completes the quorum, resolve in the same
    transaction. The votes as committed. ``AlreadyApproved`` for a second vote of a user."""
    row = await (await tx.execute(Q["approvals_of_live"], (escalation_id,))).fetchone()
    if row is None:  # ended since it was read
        status = await (await tx.execute(Q["escalation_status"], (escalation_id,))).fetchone()
        current = status[0] if status else "missing"
        raise InvalidState(f"escalation is {current}", current_status=current)
    approvals = approvals_from_json(row[0])
    if any(a.by == approval.by for a in approvals):
        raise AlreadyApproved(f"{approval.by} already approved this escalation")
    approvals = (*approvals, approval)
    await tx.execute(Q["set_approvals"], (approvals_to_json(approvals), escalation_id))
    if sum(a.choice == approval.choice for a in approvals) < quorum:
        add_history(tx, escalation_id=escalation_id, event="approved", by=approval.by, at_ms=approval.at_ms)
        return approvals
    await resolve(tx, escalation_id=escalation_id, resolution=resolution, history_event="decided", callback=callback)
    return approvals


async def nudge_many(tx: GroupTx, *, items: list[Nudge]) -> list[str]:
    """Reminders and levels; skip those whose row moved on since it was read. The ids written."""
    done = []
    for n in items:
        if await tx.changed(Q["nudge"], (n.level, n.remind_ms, n.nudge_ms, n.escalation_id, n.expected_ms)) != 1:
            continue
        for route in n.routes:
            await tx.execute(Q["add_route_if_new"], (route, n.escalation_id))
        for h in n.history:
            add_history(tx, escalation_id=n.escalation_id, event=h.event, by=h.by, at_ms=h.at_ms)
        await add_deliveries(tx, deliveries=list(n.notifications))
        done.append(n.escalation_id)
    return done
