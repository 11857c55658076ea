"""Workspaces, API keys, users and policies on SQLite: the writer's jobs.

Each job takes a ``sqlite3.Connection`` and keyword arguments, and runs in
the transaction of the writer's group (``SqliteStore``); nothing outside
the store calls them. Secrets are minted by the core: only hashes arrive here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import orjson

from escalated.domain.contacts import contact_taken
from escalated.domain.models import DEFAULT_WORKSPACE, ApiKeyInfo, Policy, UserInfo, Workspace
from escalated.errors import ConfigError, NotFound
from escalated.domain.ids import new_id
from escalated.store import queries
from escalated.store.rows import policy_from_row, review_to_json, user_from_row, workspace_from_row
from escalated.timeutil import now_ms

Q = queries.load("sqlite")

# -- workspaces ---------------------------------------------------------------


def ensure_default_workspace(conn: sqlite3.Connection) -> None:
    if conn.execute(Q["workspace_by_name"], (DEFAULT_WORKSPACE,)).fetchone() is None:
        conn.execute(Q["create_workspace"], (new_id("wsp"), DEFAULT_WORKSPACE, now_ms()))


def create_workspace(conn: sqlite3.Connection, *, name: str) -> Workspace:
    if conn.execute(Q["workspace_by_name"], (name,)).fetchone():
        raise ConfigError(f"workspace {name!r} already exists")
    ws = Workspace(id=new_id("wsp"), name=name)
    conn.execute(Q["create_workspace"], (ws.id, ws.name, now_ms()))
    return ws


def workspace_by_name(conn: sqlite3.Connection, *, name: str) -> Workspace:
    row = conn.execute(Q["workspace_by_name"], (name,)).fetchone()
    if row is None:
        raise ConfigError(f"no workspace named {name!r} (see: escalated workspaces list)")
    return workspace_from_row(row)


# -- API keys -----------------------------------------------------------------


def insert_api_key(
    conn: sqlite3.Connection, *, workspace_id: str, token_hash: str, name: str | None, scopes: frozenset[str], expires_ms: int | None
) -> ApiKeyInfo:
    info = ApiKeyInfo(
        id=new_id("key"), workspace_id=workspace_id, name=name, scopes=scopes, created_ms=now_ms(), expires_ms=expires_ms
    )
    conn.execute(
        Q["create_key"],
        (info.id, workspace_id, name, token_hash, " ".join(sorted(scopes)), info.created_ms, expires_ms),
    )
    return info


def insert_first_api_key(
    conn: sqlite3.Connection,
    *,
    workspace_id: str,
    token_hash: str,
    name: str,
    scopes: frozenset[str],
    before_commit: Callable[[], None],
) -> ApiKeyInfo | None:
    if conn.execute(Q["workspace_has_key"], (workspace_id,)).fetchone() is not None:
        return None
    info = insert_api_key(conn, workspace_id=workspace_id, token_hash=token_hash, name=name, scopes=scopes, expires_ms=None)
    before_commit()
    return info


def revoke_api_key(conn: sqlite3.Connection, *, key_id: str, workspace_id: str | None) -> None:
    if workspace_id is None:
        cur = conn.execute(Q["revoke_key"], (now_ms(), key_id))
    else:
        cur = conn.execute(Q["revoke_key_in_workspace"], (now_ms(), key_id, workspace_id))
    if cur.rowcount == 0 and conn.execute(Q["key_exists"], (key_id,)).fetchone() is None:
        raise NotFound(f"no API key {key_id}")


# -- users --------------------------------------------------------------------


def insert_user(
    conn: sqlite3.Connection,
    *,
    workspace_id: str,
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


def rotate_user_token(conn: sqlite3.Connection, *, workspace_id: str, name: str, token_hash: str) -> None:
    if conn.execute(Q["rotate_user_token"], (token_hash, workspace_id, name)).rowcount == 0:
        raise ConfigError(f"no user named {name!r} in this workspace")


# -- policies -----------------------------------------------------------------


def upsert_policy(conn: sqlite3.Connection, *, policy: Policy) -> None:
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
            review_to_json(policy.review),
            now_ms(),
        ),
    )


def put_policies(conn: sqlite3.Connection, *, workspace_id: str, policies: list[Policy], prune: bool) -> list[str]:
    for policy in policies:
        upsert_policy(conn, policy=policy)
    if not prune:
        return []
    keep = {p.key for p in policies}
    existing = [policy_from_row(row).key for row in conn.execute(Q["policies_of_workspace"], (workspace_id,))]
    pruned = [key for key in existing if key not in keep]
    for key in pruned:
        conn.execute(Q["delete_policy"], (workspace_id, key))
    return pruned


def delete_policy(conn: sqlite3.Connection, *, workspace_id: str, key: str) -> bool:
    return conn.execute(Q["delete_policy"], (workspace_id, key)).rowcount > 0
