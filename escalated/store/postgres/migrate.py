"""Migrate a PostgreSQL database, once, however many replicas start at once.

The whole run is one transaction holding a transaction-level advisory lock:
replicas that start together queue on the lock, and each one after the
first finds the list applied and the default workspace there. PostgreSQL's
DDL is transactional, so a migration that fails leaves nothing behind.
"""

from __future__ import annotations

import psycopg

from escalated.ids import new_id
from escalated.domain.models import DEFAULT_WORKSPACE
from escalated.store.postgres.schema import MIGRATIONS, MIGRATIONS_TABLE
from escalated.timeutil import now_ms

# Any fixed 64-bit number shared by every replica; this one spells "escalate".
MIGRATION_LOCK = 0x657363616C617465

def migrate(url: str) -> list[str]:
    """Apply what is missing; return the names applied by this call."""
    with psycopg.connect(url) as conn:
        return migrate_on(conn)

def migrate_on(conn: psycopg.Connection) -> list[str]:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(MIGRATIONS_TABLE)
        done = {name for (name,) in conn.execute("SELECT name FROM migrations")}
        applied = []
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO migrations (name, applied_ms) VALUES (%s, %s)", (name, now_ms()))
            applied.append(name)
        conn.execute(
            "INSERT INTO workspaces (id, name, created_ms) VALUES (%s, %s, %s) ON CONFLICT (name) DO NOTHING",
            (new_id("wsp"), DEFAULT_WORKSPACE, now_ms()),
        )
    return applied
