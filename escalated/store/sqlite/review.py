"""Reviewer operations on SQLite (CONTRACT §15): quorum votes and the SLA
clock's reminders and levels. Write jobs run by the one writer, in turn, so
the votes read in a job are every committed vote; each ending still goes
through the compare-and-set of ``escalations.resolve``.
"""

from __future__ import annotations

import sqlite3

from escalated.domain.models import Approval, Delivery, Resolution
from escalated.domain.review import Nudge
from escalated.errors import AlreadyApproved, InvalidState
from escalated.store.sqlite.escalations import Q, insert_deliveries, resolve
from escalated.store.rows import approvals_from_json, approvals_to_json


def approve(
    conn: sqlite3.Connection,
    *,
    escalation_id: str,
    approval: Approval,
    quorum: int,
    resolution: Resolution,
    callback: Delivery | None,
) -> tuple[Approval, ...]:
    """Add a vote; when it completes the quorum, resolve in the same
    transaction. The votes as committed. ``AlreadyApproved`` for a second vote of a user."""
    row = conn.execute(Q["approvals_of_live"], (escalation_id,)).fetchone()
    if row is None:  # ended since it was read
        status = conn.execute(Q["escalation_status"], (escalation_id,)).fetchone()
        current = status[0] if status else "missing"
        raise InvalidState(f"escalation is {current}", current_status=current)
    approvals = approvals_from_json(row[0])
    if any(a.by == approval.by for a in approvals):
        raise AlreadyApproved(f"{approval.by} already approved this escalation")
    approvals = (*approvals, approval)
    conn.execute(Q["set_approvals"], (approvals_to_json(approvals), escalation_id))
    if sum(a.choice == approval.choice for a in approvals) < quorum:
        conn.execute(Q["add_history"], (escalation_id, "approved", approval.by, approval.at_ms))
        return approvals
    resolve(conn, escalation_id=escalation_id, resolution=resolution, history_event="decided", callback=callback)
    return approvals


def nudge_many(conn: sqlite3.Connection, *, items: list[Nudge]) -> list[str]:
    """Reminders and levels; skip those whose row moved on since it was read. The ids written."""
    done = []
    for n in items:
        if conn.execute(Q["nudge"], (n.level, n.remind_ms, n.nudge_ms, n.escalation_id, n.expected_ms)).rowcount != 1:
            continue
        conn.executemany(Q["add_route_if_new"], [(route, n.escalation_id) for route in n.routes])
        conn.executemany(Q["add_history"], [(n.escalation_id, h.event, h.by, h.at_ms) for h in n.history])
        insert_deliveries(conn, list(n.notifications))
        done.append(n.escalation_id)
    return done


