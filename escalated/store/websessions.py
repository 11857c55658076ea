"""Web app sessions and single-use sign-in links (CONTRACT §11).

Only hashes of the secrets are stored. A session or link is bound to the
user's token hash at the time it was made: the look-ups join on it, so a
token rotation ends them all at once.

Write functions take a ``sqlite3.Connection`` and run inside the caller's
transaction (the server's writer or the CLI), like ``store.admin``.
"""

from __future__ import annotations

import sqlite3

from escalated.errors import ConfigError
from escalated.store.admin import USER_COLUMNS

_USER_COLUMNS_OF_U = ", ".join(f"u.{c.strip()}" for c in USER_COLUMNS.split(","))

# The user row (as store.admin.user_from_row reads it), then last_seen_ms.
SELECT_SESSION_USER = (
    f"SELECT {_USER_COLUMNS_OF_U}, s.last_seen_ms FROM web_sessions s"
    " JOIN users u ON u.id = s.user_id AND u.token_hash = s.user_token_hash"
    " WHERE s.id_hash = ? AND s.ended_ms IS NULL"
)


def start_session(conn: sqlite3.Connection, id_hash: str, *, user_id: str, user_token_hash: str, at_ms: int) -> None:
    conn.execute(
        "INSERT INTO web_sessions (id_hash, user_id, user_token_hash, created_ms, last_seen_ms) VALUES (?, ?, ?, ?, ?)",
        (id_hash, user_id, user_token_hash, at_ms, at_ms),
    )


def touch_session(conn: sqlite3.Connection, id_hash: str, at_ms: int) -> None:
    conn.execute("UPDATE web_sessions SET last_seen_ms = ? WHERE id_hash = ? AND ended_ms IS NULL", (at_ms, id_hash))


def end_session(conn: sqlite3.Connection, id_hash: str, at_ms: int) -> None:
    conn.execute("UPDATE web_sessions SET ended_ms = ? WHERE id_hash = ? AND ended_ms IS NULL", (at_ms, id_hash))


def user_id_and_token_hash(conn: sqlite3.Connection, workspace_id: str, name: str) -> tuple[str, str]:
    row = conn.execute("SELECT id, token_hash FROM users WHERE workspace_id = ? AND name = ?", (workspace_id, name)).fetchone()
    if row is None:
        raise ConfigError(f"no user named {name!r} in this workspace (add one with: escalated users add {name})")
    return row[0], row[1]


def insert_login_link(
    conn: sqlite3.Connection, secret_hash: str, *, workspace_id: str, name: str, at_ms: int, expires_ms: int
) -> None:
    user_id, token_hash = user_id_and_token_hash(conn, workspace_id, name)
    conn.execute(
        "INSERT INTO login_links (secret_hash, user_id, user_token_hash, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?)",
        (secret_hash, user_id, token_hash, at_ms, expires_ms),
    )


def redeem_login_link(conn: sqlite3.Connection, secret_hash: str, *, session_hash: str, at_ms: int) -> tuple | None:
    """Use the link once and start a session with it; the user row, or None
    when the link is unknown, used, expired or its user's token was rotated."""
    cur = conn.execute(
        "UPDATE login_links SET used_ms = ? WHERE secret_hash = ? AND used_ms IS NULL AND expires_ms > ?",
        (at_ms, secret_hash, at_ms),
    )
    if cur.rowcount != 1:
        return None
    row = conn.execute(
        f"SELECT {_USER_COLUMNS_OF_U}, u.token_hash FROM login_links l"
        " JOIN users u ON u.id = l.user_id AND u.token_hash = l.user_token_hash WHERE l.secret_hash = ?",
        (secret_hash,),
    ).fetchone()
    if row is None:
        return None
    start_session(conn, session_hash, user_id=row[0], user_token_hash=row[-1], at_ms=at_ms)
    return row[:-1]
