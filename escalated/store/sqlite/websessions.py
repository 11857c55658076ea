"""Web app sessions and single-use sign-in links on SQLite (CONTRACT §11).

Only hashes of the secrets are stored. Write functions take a
``sqlite3.Connection`` and keyword arguments, and run in the transaction
of the writer's group (``SqliteStore``), like ``workspaces.py``.
"""

from __future__ import annotations

import sqlite3

from escalated.domain.models import UserInfo
from escalated.errors import ConfigError
from escalated.store import queries
from escalated.store.rows import user_from_row

Q = queries.load("sqlite")


def start_session(conn: sqlite3.Connection, *, id_hash: str, user_id: str, user_token_hash: str, at_ms: int) -> None:
    conn.execute(Q["start_session"], (id_hash, user_id, user_token_hash, at_ms, at_ms))


def touch_session(conn: sqlite3.Connection, *, id_hash: str, at_ms: int) -> None:
    conn.execute(Q["touch_session"], (at_ms, id_hash))


def end_session(conn: sqlite3.Connection, *, id_hash: str, at_ms: int) -> None:
    conn.execute(Q["end_session"], (at_ms, id_hash))


def insert_login_link(
    conn: sqlite3.Connection, *, secret_hash: str, workspace_id: str, name: str, at_ms: int, expires_ms: int
) -> None:
    row = conn.execute(Q["user_id_and_token_hash"], (workspace_id, name)).fetchone()
    if row is None:
        raise ConfigError(f"no user named {name!r} in this workspace (add one with: escalated users add {name})")
    user_id, token_hash = row
    conn.execute(Q["create_login_link"], (secret_hash, user_id, token_hash, at_ms, expires_ms))


def redeem_login_link(conn: sqlite3.Connection, *, secret_hash: str, session_hash: str, at_ms: int) -> UserInfo | None:
    """Use the link once and start a session with it; its user, or None when
    the link is unknown, used, expired or its user's token was rotated."""
    if conn.execute(Q["use_login_link"], (at_ms, secret_hash, at_ms)).rowcount != 1:
        return None
    row = conn.execute(Q["login_link_user"], (secret_hash,)).fetchone()
    if row is None:
        return None
    start_session(conn, id_hash=session_hash, user_id=row[0], user_token_hash=row[-1], at_ms=at_ms)
    return user_from_row(row[:-1])
