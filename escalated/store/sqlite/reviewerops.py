"""Reviewer operations on SQLite (CONTRACT §15): claims and assignments, and
remembered decisions (rules). Write jobs run by the writer; reads through
the readers. ``SqliteStore`` is their only caller.
"""

from __future__ import annotations

import sqlite3

from escalated.domain.models import Delivery, Resolution
from escalated.domain.rules import Rule
from escalated.errors import InvalidState
from escalated.store import queries
from escalated.store.sqlite.escalations import resolve
from escalated.store.rows import rule_params

Q = queries.load("sqlite")


def assign(
    conn: sqlite3.Connection, *, escalation_id: str, assignee: str | None, by: str, event: str, acknowledge: bool, at_ms: int
) -> bool:
    """Set the assignee of a live escalation (compare-and-set on status), with
    its history; with ``acknowledge`` (a claim), acknowledge it too if it was
    open. True when this acknowledged it."""
    acknowledged = acknowledge and conn.execute(Q["acknowledge"], (by, at_ms, escalation_id)).rowcount == 1
    if acknowledged:
        conn.execute(Q["add_history"], (escalation_id, "acknowledged", by, at_ms))
    if conn.execute(Q["assign"], (assignee, escalation_id)).rowcount != 1:
        row = conn.execute(Q["escalation_status"], (escalation_id,)).fetchone()
        status = row[0] if row else "missing"
        raise InvalidState(f"escalation is {status}", current_status=status)
    conn.execute(Q["add_history"], (escalation_id, event, by, at_ms))
    return acknowledged


def add_rule(conn: sqlite3.Connection, *, rule: Rule) -> None:
    conn.execute(Q["add_rule"], rule_params(rule))


def revoke_rule(conn: sqlite3.Connection, *, rule_id: str, workspace_id: str, by: str, at_ms: int) -> bool:
    """False when it was revoked already (the first revocation is kept)."""
    return conn.execute(Q["revoke_rule"], (by, at_ms, rule_id, workspace_id)).rowcount == 1


def resolve_by_rule(
    conn: sqlite3.Connection, *, escalation_id: str, resolution: Resolution, callback: Delivery | None, rule_id: str
) -> None:
    """A rule's decision: the resolution and its use of the rule in one transaction."""
    resolve(conn, escalation_id=escalation_id, resolution=resolution, history_event="decided", callback=callback)
    conn.execute(Q["add_rule_use"], (rule_id, escalation_id, resolution.answered_at_ms))


