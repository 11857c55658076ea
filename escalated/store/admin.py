"""Workspaces, API keys, users and policies.

Write functions take a ``sqlite3.Connection`` and run inside a transaction
opened by the caller (the server's writer or the CLI). Read queries are
exposed as SQL plus a row converter so the server (aiosqlite) and the CLI
(sqlite3) share them.
"""

from __future__ import annotations

import sqlite3

import orjson

from escalated.domain import tokens
from escalated.domain.models import ApiKeyInfo, Policy, UserInfo, Workspace
from escalated.errors import ConfigError, NotFound
from escalated.ids import new_id
from escalated.timeutil import now_ms

DEFAULT_WORKSPACE = "default"

# -- workspaces ---------------------------------------------------------------

SELECT_WORKSPACE_BY_NAME = "SELECT id, name FROM workspaces WHERE name = ?"


def ensure_default_workspace(conn: sqlite3.Connection) -> None:
    if conn.execute(SELECT_WORKSPACE_BY_NAME, (DEFAULT_WORKSPACE,)).fetchone() is None:
        conn.execute(
            "INSERT INTO workspaces (id, name, created_ms) VALUES (?, ?, ?)",
            (new_id("wsp"), DEFAULT_WORKSPACE, now_ms()),
        )


def create_workspace(conn: sqlite3.Connection, name: str) -> Workspace:
    if conn.execute(SELECT_WORKSPACE_BY_NAME, (name,)).fetchone():
        raise ConfigError(f"workspace {name!r} already exists")
    ws = Workspace(id=new_id("wsp"), name=name)
    conn.execute("INSERT INTO workspaces (id, name, created_ms) VALUES (?, ?, ?)", (ws.id, ws.name, now_ms()))
    return ws


def workspace_by_name(conn: sqlite3.Connection, name: str) -> Workspace:
    row = conn.execute(SELECT_WORKSPACE_BY_NAME, (name,)).fetchone()
    if row is None:
        raise ConfigError(f"no workspace named {name!r} (see: escalated workspaces list)")
    return Workspace(*row)


def list_workspaces(conn: sqlite3.Connection) -> list[Workspace]:
    return [Workspace(*row) for row in conn.execute("SELECT id, name FROM workspaces ORDER BY name")]


# -- API keys -----------------------------------------------------------------

KEY_COLUMNS = "id, workspace_id, name, scopes, created_ms, expires_ms, revoked_ms"
SELECT_KEY_BY_HASH = f"SELECT {KEY_COLUMNS} FROM api_keys WHERE token_hash = ?"
SELECT_KEYS_OF_WORKSPACE = f"SELECT {KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? ORDER BY id"
SELECT_KEY_BY_ID = f"SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ? AND workspace_id = ?"


def key_from_row(row: tuple) -> ApiKeyInfo:
    kid, ws, name, scopes, created, expires, revoked = row
    return ApiKeyInfo(
        id=kid,
        workspace_id=ws,
        name=name,
        scopes=frozenset(scopes.split()),
        created_ms=created,
        expires_ms=expires,
        revoked_ms=revoked,
    )


def issue_api_key(
    conn: sqlite3.Connection,
    workspace_id: str,
    *,
    name: str | None,
    scopes: frozenset[str],
    expires_ms: int | None = None,
) -> tuple[str, ApiKeyInfo]:
    """Mint a key and store only its hash; the secret is returned this once."""
    secret = tokens.mint(tokens.API_KEY_PREFIX)
    info = insert_api_key(
        conn, workspace_id, token_hash=tokens.hash_token(secret), name=name, scopes=scopes, expires_ms=expires_ms
    )
    return secret, info


def insert_api_key(
    conn: sqlite3.Connection,
    workspace_id: str,
    *,
    token_hash: str,
    name: str | None,
    scopes: frozenset[str],
    expires_ms: int | None = None,
    at_ms: int | None = None,
) -> ApiKeyInfo:
    info = ApiKeyInfo(
        id=new_id("key"),
        workspace_id=workspace_id,
        name=name,
        scopes=scopes,
        created_ms=at_ms or now_ms(),
        expires_ms=expires_ms,
    )
    conn.execute(
        "INSERT INTO api_keys (id, workspace_id, name, token_hash, scopes, created_ms, expires_ms)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (info.id, workspace_id, name, token_hash, " ".join(sorted(scopes)), info.created_ms, expires_ms),
    )
    return info


def revoke_api_key(conn: sqlite3.Connection, key_id: str, *, workspace_id: str | None = None) -> None:
    sql = "UPDATE api_keys SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL"
    params: tuple = (now_ms(), key_id)
    if workspace_id is not None:
        sql += " AND workspace_id = ?"
        params += (workspace_id,)
    if conn.execute(sql, params).rowcount == 0:
        exists = conn.execute("SELECT revoked_ms FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        if exists is None:
            raise NotFound(f"no API key {key_id}")


def list_api_keys(conn: sqlite3.Connection, workspace_id: str | None = None) -> list[ApiKeyInfo]:
    if workspace_id is None:
        rows = conn.execute(f"SELECT {KEY_COLUMNS} FROM api_keys ORDER BY id")
    else:
        rows = conn.execute(SELECT_KEYS_OF_WORKSPACE, (workspace_id,))
    return [key_from_row(r) for r in rows]


def workspace_has_api_key(conn: sqlite3.Connection, workspace_id: str) -> bool:
    return conn.execute("SELECT 1 FROM api_keys WHERE workspace_id = ? LIMIT 1", (workspace_id,)).fetchone() is not None


# -- users --------------------------------------------------------------------

USER_COLUMNS = "id, workspace_id, name, role, groups_json, created_ms"
SELECT_USER_BY_HASH = f"SELECT {USER_COLUMNS} FROM users WHERE token_hash = ?"


def user_from_row(row: tuple) -> UserInfo:
    uid, ws, name, role, groups, created = row
    return UserInfo(id=uid, workspace_id=ws, name=name, role=role, groups=tuple(orjson.loads(groups)), created_ms=created)


def insert_user(
    conn: sqlite3.Connection, workspace_id: str, *, name: str, role: str, groups: tuple[str, ...], token_hash: str
) -> UserInfo:
    if conn.execute("SELECT 1 FROM users WHERE workspace_id = ? AND name = ?", (workspace_id, name)).fetchone():
        raise ConfigError(f"user {name!r} already exists (rotate the token with: escalated users token {name})")
    user = UserInfo(id=new_id("usr"), workspace_id=workspace_id, name=name, role=role, groups=groups, created_ms=now_ms())
    conn.execute(
        "INSERT INTO users (id, workspace_id, name, role, groups_json, token_hash, created_ms)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (user.id, workspace_id, name, role, orjson.dumps(list(groups)).decode(), token_hash, user.created_ms),
    )
    return user


def rotate_user_token(conn: sqlite3.Connection, workspace_id: str, *, name: str, token_hash: str) -> None:
    cur = conn.execute(
        "UPDATE users SET token_hash = ? WHERE workspace_id = ? AND name = ?", (token_hash, workspace_id, name)
    )
    if cur.rowcount == 0:
        raise ConfigError(f"no user named {name!r} in this workspace")


def list_users(conn: sqlite3.Connection, workspace_id: str) -> list[UserInfo]:
    rows = conn.execute(f"SELECT {USER_COLUMNS} FROM users WHERE workspace_id = ? ORDER BY name", (workspace_id,))
    return [user_from_row(r) for r in rows]


# -- policies -----------------------------------------------------------------

POLICY_COLUMNS = "workspace_id, key, reviewers_json, notify_json, sla_s, default_choice, cancel_callback"
SELECT_POLICY = f"SELECT {POLICY_COLUMNS} FROM policies WHERE workspace_id = ? AND key = ?"


def policy_from_row(row: tuple) -> Policy:
    ws, key, reviewers, notify, sla_s, default_choice, cancel_callback = row
    return Policy(
        workspace_id=ws,
        key=key,
        reviewers=tuple(orjson.loads(reviewers)),
        notify=tuple(orjson.loads(notify)),
        sla_s=sla_s,
        default_choice=default_choice,
        cancel_callback=bool(cancel_callback),
    )


def upsert_policy(conn: sqlite3.Connection, policy: Policy) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO policies ({POLICY_COLUMNS}, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            policy.workspace_id,
            policy.key,
            orjson.dumps(list(policy.reviewers)).decode(),
            orjson.dumps(list(policy.notify)).decode(),
            policy.sla_s,
            policy.default_choice,
            int(policy.cancel_callback),
            now_ms(),
        ),
    )


def get_policy(conn: sqlite3.Connection, workspace_id: str, key: str) -> Policy | None:
    row = conn.execute(SELECT_POLICY, (workspace_id, key)).fetchone()
    return policy_from_row(row) if row else None


def list_policies(conn: sqlite3.Connection, workspace_id: str) -> list[Policy]:
    rows = conn.execute(f"SELECT {POLICY_COLUMNS} FROM policies WHERE workspace_id = ? ORDER BY key", (workspace_id,))
    return [policy_from_row(r) for r in rows]


def delete_policy(conn: sqlite3.Connection, workspace_id: str, key: str) -> bool:
    return conn.execute("DELETE FROM policies WHERE workspace_id = ? AND key = ?", (workspace_id, key)).rowcount > 0


# -- async reads for the server's auth path --------------------------------------


async def find_api_key_by_id(db, key_id: str, workspace_id: str) -> ApiKeyInfo | None:
    row = await db.fetchone(SELECT_KEY_BY_ID, (key_id, workspace_id))
    return key_from_row(row) if row else None


async def workspace_api_keys(db, workspace_id: str) -> list[ApiKeyInfo]:
    return [key_from_row(r) for r in await db.fetchall(SELECT_KEYS_OF_WORKSPACE, (workspace_id,))]
