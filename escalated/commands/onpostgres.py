"""The data commands that also run on a PostgreSQL URL: ``users add`` and
``policy set`` (enough to make a database usable: the bootstrap key mints
API keys over HTTP). They go through the same Store the server uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from escalated.commands.routing import ALLOW_FLAG, known_names
from escalated.core.stores import open_store
from escalated.domain.models import Policy
from escalated.domain.policies import unknown_reviewers
from escalated.errors import ConfigError
from escalated.settings import PostgresUrl, Settings
from escalated.store.base import Store

T = TypeVar("T")


def run_on(db: PostgresUrl, fn: Callable[[Store], Awaitable[T]]) -> T:
    import psycopg

    async def main() -> T:
        store = await open_store(Settings(db_path=db))
        try:
            return await fn(store)
        finally:
            await store.close()

    try:
        return asyncio.run(main())
    except psycopg.Error as exc:  # libpq's messages name host and user, never the password
        raise ConfigError(f"database error: {exc}") from None


async def add_user(
    store: Store,
    *,
    workspace: str,
    name: str,
    role: str,
    groups: tuple[str, ...],
    token_hash: str,
    email: str | None = None,
    slack_id: str | None = None,
) -> None:
    ws = await store.workspace_by_name(name=workspace)
    await store.add_user(
        workspace_id=ws.id, name=name, role=role, groups=groups, token_hash=token_hash, email=email, slack_id=slack_id
    )


async def set_policy(store: Store, *, workspace: str, build: Callable[[str], Policy], allow_unknown: bool) -> list[str]:
    """Save the policy ``build(workspace_id)``; refuse reviewers matching no user unless allowed."""
    ws = await store.workspace_by_name(name=workspace)
    policy = build(ws.id)
    warnings = []
    users = await store.users(workspace_id=ws.id)
    if unknown := unknown_reviewers(policy.reviewers, users):
        if not allow_unknown:
            raise ConfigError(
                f"policy {policy.key}: no user or group matches {', '.join(unknown)} ({known_names(users)}). "
                f"Add them with `escalated users add NAME [--group G]`, or pass {ALLOW_FLAG} to save it anyway."
            )
        warnings.append(f"warning: policy {policy.key} routes to {', '.join(unknown)}, matching no user")
    await store.put_policy(policy=policy)
    return warnings
