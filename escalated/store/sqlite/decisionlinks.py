"""Email decision links on SQLite (issue #16): writer jobs on a ``sqlite3.Connection``.

Only hashes of the secrets arrive here; the core mints them.
"""

from __future__ import annotations

import sqlite3

from escalated.domain.models import NewDecisionLink
from escalated.store import queries

Q = queries.load("sqlite")


def add_links(conn: sqlite3.Connection, *, delivery_id: str, links: list[NewDecisionLink], at_ms: int) -> None:
    """Replace the email's earlier unused links, then store the new ones, in one transaction."""
    conn.execute(Q["replace_decision_links"], (at_ms, delivery_id))
    conn.executemany(
        Q["add_decision_link"],
        [(k.secret_hash, delivery_id, k.escalation_id, k.user_id, k.choice, at_ms, k.expires_ms) for k in links],
    )


def use_link(conn: sqlite3.Connection, *, secret_hash: str, at_ms: int) -> bool:
    return conn.execute(Q["use_decision_link"], (at_ms, secret_hash, at_ms)).rowcount == 1
