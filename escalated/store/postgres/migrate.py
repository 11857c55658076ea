"""Migrate a PostgreSQL database, once, however many replicas start at once.

The whole run is one transaction holding a transaction-level advisory lock:
replicas that start together queue on the lock, and each one after the
first finds the list applied and the default workspace there. PostgreSQL's
DDL is transactional, so a migration that fails leaves nothing behind.
"""

from __future__ import annotations

import psycopg

from escalated.domain.ids import new_id
from escalated.domain.models import DEFAULT_WORKSPACE
from escalated.store import migrations, queries
from escalated.timeutil import now_ms

Q = queries.load("postgres")


def migrate(url: str) -> list[str]:
    """Apply what is missing; return the names applied by this call."""
    with psycopg.connect(url) as conn:
        return migrate_on(conn)


def migrate_on(conn: psycopg.Connection) -> list[str]:
    with conn.transaction():
        conn.execute(Q["lock_migrations"])
        conn.execute(Q["create_migrations_table"])
        done = {name for (name,) in conn.execute(Q["applied_migrations"])}
        applied = []
        for name, sql in migrations.load("postgres"):
            if name in done:
                continue
            conn.execute(sql)
            conn.execute(Q["record_migration"], {"name": name, "applied_ms": now_ms()})
            applied.append(name)
        conn.execute(Q["ensure_workspace"], {"id": new_id("wsp"), "name": DEFAULT_WORKSPACE, "created_ms": now_ms()})
    return applied
