"""Workspaces, API keys, users and policies on SQLite, in a caller's transaction.

Being retired: the server and the CLI go through ``AdminService`` (core/admin.py)
and the store's own jobs (store/workspaces.py); these remain only for the
test set-up and benchmarks that still open their own transactions.
"""

from __future__ import annotations

import sqlite3

import orjson

from escalated.domain import tokens
from escalated.domain.contacts import contact_taken
from escalated.domain.models import DEFAULT_WORKSPACE, ApiKeyInfo, Policy, UserInfo, Workspace
from escalated.errors import ConfigError, NotFound
from escalated.ids import new_id
from escalated.store import queries
from escalated.store.rows import key_from_row, policy_from_row, user_from_row, workspace_from_row
from escalated.timeutil import now_ms

Q = queries.load("sqlite")

# -- workspaces ---------------------------------------------------------------


def ensure_default_workspace(conn: sqlite3.Connection) -> None:
    if conn.execute(Q["workspace_by_name"], (DEFAULT_WORKSPACE,)).fetchone() is None:
        conn.execute(Q["create_workspace"], (new_id("wsp"), DEFAULT_WORKSPACE, now_ms()))


def create_workspace(conn: sqlite3.Connection, name: str) -> Workspace:
    if conn.execute(Q["workspace_by_name"], (name,)).fetchone():
        raise ConfigError(f"workspace {name!r} already exists")
    ws = Workspace(id=new_id("wsp"), name=name)
    conn.execute(Q["create_workspace"], (ws.id, ws.name, now_ms()))
    return ws


def workspace_by_name(conn: sqlite3.Connection, name: str) -> Workspace:
    row = conn.execute(Q["workspace_by_name"], (name,)).fetchone()
    if row is None:
        raise ConfigError(f"no workspace named {name!r} (see: escalated workspaces list)")
    return workspace_from_row(row)


def list_workspaces(conn: sqlite3.Connection) -> list[Workspace]:
    return [workspace_from_row(row) for row in conn.execute(Q["list_workspaces"])]


# -- API keys -----------------------------------------------------------------


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
        Q["create_key"],
        (info.id, workspace_id, name, token_hash, " ".join(sorted(scopes)), info.created_ms, expires_ms),
    )
    return info


def revoke_api_key(conn: sqlite3.Connection, key_id: str, *, workspace_id: str | None = None) -> None:
    if workspace_id is None:
        cur = conn.execute(Q["revoke_key"], (now_ms(), key_id))
    else:
        cur = conn.execute(Q["revoke_key_in_workspace"], (now_ms(), key_id, workspace_id))
    if cur.rowcount == 0 and conn.execute(Q["key_exists"], (key_id,)).fetchone() is None:
        raise NotFound(f"no API key {key_id}")


def list_api_keys(conn: sqlite3.Connection, workspace_id: str | None = None) -> list[ApiKeyInfo]:
    if workspace_id is None:
        rows = conn.execute(Q["all_keys"])
    else:
        rows = conn.execute(Q["keys_of_workspace"], (workspace_id,))
    return [key_from_row(r) for r in rows]


def workspace_has_api_key(conn: sqlite3.Connection, workspace_id: str) -> bool:
    return conn.execute(Q["workspace_has_key"], (workspace_id,)).fetchone() is not None


# -- users --------------------------------------------------------------------


def insert_user(
    conn: sqlite3.Connection,
    workspace_id: str,
    *,
    name: str,
    role: str,
    groups: tuple[str, ...],
    token_hash: str,
    email: str | None = None,
    slack_id: str | None = None,
) -> UserInfo:
    if conn.execute(Q["user_exists"], (workspace_id, name)).fetchone():
        raise ConfigError(f"user {name!r} already exists (rotate the token with: escalated users token {name})")
    for query, value, what in (("user_by_email", email, "email"), ("user_by_slack_id", slack_id, "Slack id")):
        if value is not None and (row := conn.execute(Q[query], (workspace_id, value)).fetchone()):
            raise ConfigError(contact_taken(what, value, owner=user_from_row(row).name))
    user = UserInfo(
        id=new_id("usr"), workspace_id=workspace_id, name=name, role=role, groups=groups, created_ms=now_ms(),
        email=email, slack_id=slack_id,
    )  # fmt: skip
    params = (user.id, workspace_id, name, role, orjson.dumps(list(groups)).decode(), token_hash, user.created_ms, email, slack_id)
    conn.execute(Q["create_user"], params)
    return user


def rotate_user_token(conn: sqlite3.Connection, workspace_id: str, *, name: str, token_hash: str) -> None:
    if conn.execute(Q["rotate_user_token"], (token_hash, workspace_id, name)).rowcount == 0:
        raise ConfigError(f"no user named {name!r} in this workspace")


def list_users(conn: sqlite3.Connection, workspace_id: str) -> list[UserInfo]:
    return [user_from_row(r) for r in conn.execute(Q["users_of_workspace"], (workspace_id,))]


# -- policies -----------------------------------------------------------------


def upsert_policy(conn: sqlite3.Connection, policy: Policy) -> None:
    conn.execute(
        Q["put_policy"],
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
    row = conn.execute(Q["get_policy"], (workspace_id, key)).fetchone()
    return policy_from_row(row) if row else None


def list_policies(conn: sqlite3.Connection, workspace_id: str) -> list[Policy]:
    return [policy_from_row(r) for r in conn.execute(Q["policies_of_workspace"], (workspace_id,))]


def delete_policy(conn: sqlite3.Connection, workspace_id: str, key: str) -> bool:
    return conn.execute(Q["delete_policy"], (workspace_id, key)).rowcount > 0
