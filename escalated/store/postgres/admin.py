"""Workspaces, keys, users, policies and web sessions on PostgreSQL: the
part of ``PostgresStore`` the admin surfaces and the web app use.

Reads go to the pool, writes to the replica's writer; the same named
queries as SQLite's ``store/sqlite/workspaces.py`` and ``store/sqlite/websessions.py``. The
three rows read on every request (key or user by token hash, policy) come
through the replica's ``Lookups`` (lookups.py); every write to keys, users
or policies (``_config_write``) marks its commit group (``config_changed``,
so every other replica forgets them) and forgets them here at once. Adds
too: a miss is never cached today, but the rule is "the table changed",
not a guess about what the caches hold.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson

from escalated.domain.contacts import contact_taken
from escalated.domain.models import ApiKeyInfo, Policy, UserInfo, Workspace
from escalated.errors import ConfigError, NotFound
from escalated.domain.ids import new_id
from escalated.store import queries
from escalated.store.postgres.parts import StoreParts
from escalated.store.postgres.writer import GroupTx
from escalated.store.rows import key_from_row, policy_from_row, review_to_json, user_from_row, workspace_from_row
from escalated.timeutil import now_ms

Q = queries.load("postgres")
T = TypeVar("T")


async def _execute(tx: GroupTx, *, sql: str, params: tuple[Any, ...]) -> None:
    await tx.execute(sql, params)


async def _change_config(tx: GroupTx, *, sql: str, params: tuple[Any, ...]) -> int:
    tx.config_changed = True
    return await tx.changed(sql, params)


def _key_params(info: ApiKeyInfo, token_hash: str) -> tuple[Any, ...]:
    scopes = " ".join(sorted(info.scopes))
    return (info.id, info.workspace_id, info.name, token_hash, scopes, info.created_ms, info.expires_ms)


def _policy_params(policy: Policy) -> tuple[Any, ...]:
    return (
        policy.workspace_id, policy.key, orjson.dumps(list(policy.reviewers)).decode(),
        orjson.dumps(list(policy.notify)).decode(), policy.sla_s, policy.default_choice,
        bool(policy.cancel_callback), review_to_json(policy.review), now_ms(),
    )  # fmt: skip


class AdminQueries(StoreParts):
    """Mixed into ``PostgresStore``: uses its ``_writer``, ``_lookups``, ``_fetchone`` and ``_fetchall``."""

    async def _config_write(self, job: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        """A write that changes what ``_lookups`` holds: forgotten here once committed."""
        try:
            return await self._writer.submit(job, **kwargs)
        finally:
            self._lookups.forget()

    async def policy(self, *, workspace_id: str, key: str) -> Policy | None:
        async def read() -> Policy | None:
            row = await self._fetchone(Q["get_policy"], (workspace_id, key))
            return None if row is None else policy_from_row(row)

        return await self._lookups.get(("policy", workspace_id, key), read)

    async def api_key_by_hash(self, *, token_hash: str) -> ApiKeyInfo | None:
        async def read() -> ApiKeyInfo | None:
            row = await self._fetchone(Q["key_by_hash"], (token_hash,))
            return None if row is None else key_from_row(row)

        return await self._lookups.get(("key", token_hash), read)

    async def user_by_hash(self, *, token_hash: str) -> UserInfo | None:
        async def read() -> UserInfo | None:
            row = await self._fetchone(Q["user_by_hash"], (token_hash,))
            return None if row is None else user_from_row(row)

        return await self._lookups.get(("user", token_hash), read)

    async def api_key(self, *, key_id: str, workspace_id: str) -> ApiKeyInfo | None:
        row = await self._fetchone(Q["key_by_id"], (key_id, workspace_id))
        return None if row is None else key_from_row(row)

    async def api_keys(self, *, workspace_id: str | None) -> list[ApiKeyInfo]:
        if workspace_id is None:
            return [key_from_row(r) for r in await self._fetchall(Q["all_keys"])]
        return [key_from_row(r) for r in await self._fetchall(Q["keys_of_workspace"], (workspace_id,))]

    async def add_api_key(
        self, *, workspace_id: str, token_hash: str, name: str | None, scopes: frozenset[str], expires_ms: int | None
    ) -> ApiKeyInfo:
        info = ApiKeyInfo(
            id=new_id("key"), workspace_id=workspace_id, name=name, scopes=scopes, created_ms=now_ms(), expires_ms=expires_ms
        )
        await self._config_write(_change_config, sql=Q["create_key"], params=_key_params(info, token_hash))
        return info

    async def add_first_api_key(
        self, *, workspace_id: str, token_hash: str, name: str, scopes: frozenset[str], before_commit: Callable[[], None]
    ) -> ApiKeyInfo | None:
        info = ApiKeyInfo(id=new_id("key"), workspace_id=workspace_id, name=name, scopes=scopes, created_ms=now_ms())

        async def job(tx: GroupTx) -> ApiKeyInfo | None:
            await tx.execute(Q["lock_bootstrap"], ())  # replicas starting together: one key, not one each
            if await (await tx.execute(Q["workspace_has_key"], (workspace_id,))).fetchone() is not None:
                return None
            await _change_config(tx, sql=Q["create_key"], params=_key_params(info, token_hash))
            before_commit()
            return info

        return await self._config_write(job)

    async def revoke_api_key(self, *, key_id: str, workspace_id: str | None) -> None:
        async def job(tx: GroupTx) -> None:
            if workspace_id is None:
                changed = await _change_config(tx, sql=Q["revoke_key"], params=(now_ms(), key_id))
            else:
                changed = await _change_config(
                    tx, sql=Q["revoke_key_in_workspace"], params=(now_ms(), key_id, workspace_id)
                )
            if changed == 0:
                if await (await tx.execute(Q["key_exists"], (key_id,))).fetchone() is None:
                    raise NotFound(f"no API key {key_id}")

        await self._config_write(job)

    async def workspace_by_name(self, *, name: str) -> Workspace:
        row = await self._fetchone(Q["workspace_by_name"], (name,))
        if row is None:
            raise ConfigError(f"no workspace named {name!r} (see: escalated workspaces list)")
        return workspace_from_row(row)

    async def workspaces(self) -> list[Workspace]:
        return [workspace_from_row(r) for r in await self._fetchall(Q["list_workspaces"])]

    async def create_workspace(self, *, name: str) -> Workspace:
        workspace = Workspace(id=new_id("wsp"), name=name)

        async def job(tx: GroupTx) -> Workspace:
            if await (await tx.execute(Q["workspace_by_name"], (name,))).fetchone():
                raise ConfigError(f"workspace {name!r} already exists")
            await tx.execute(Q["create_workspace"], (workspace.id, name, now_ms()))
            return workspace

        return await self._writer.submit(job)

    async def put_policy(self, *, policy: Policy) -> None:
        await self._config_write(_change_config, sql=Q["put_policy"], params=_policy_params(policy))

    async def put_policies(self, *, workspace_id: str, policies: list[Policy], prune: bool) -> list[str]:
        async def job(tx: GroupTx) -> list[str]:
            tx.config_changed = True
            for policy in policies:
                await tx.execute(Q["put_policy"], _policy_params(policy))
            if not prune:
                return []
            keep = {p.key for p in policies}
            rows = await (await tx.execute(Q["policies_of_workspace"], (workspace_id,))).fetchall()
            pruned = [key for key in (policy_from_row(r).key for r in rows) if key not in keep]
            for key in pruned:
                await tx.execute(Q["delete_policy"], (workspace_id, key))
            return pruned

        return await self._config_write(job)

    async def policies(self, *, workspace_id: str) -> list[Policy]:
        return [policy_from_row(r) for r in await self._fetchall(Q["policies_of_workspace"], (workspace_id,))]

    async def delete_policy(self, *, workspace_id: str, key: str) -> bool:
        if "\x00" in key:  # PostgreSQL text cannot hold NUL: no policy has this key (SQLite says False too)
            return False

        async def job(tx: GroupTx) -> bool:
            return await _change_config(tx, sql=Q["delete_policy"], params=(workspace_id, key)) > 0

        return await self._config_write(job)

    async def users(self, *, workspace_id: str) -> list[UserInfo]:
        return [user_from_row(r) for r in await self._fetchall(Q["users_of_workspace"], (workspace_id,))]

    async def add_user(
        self,
        *,
        workspace_id: str,
        name: str,
        role: str,
        groups: tuple[str, ...],
        token_hash: str,
        email: str | None = None,
        slack_id: str | None = None,
    ) -> UserInfo:
        user = UserInfo(
            id=new_id("usr"), workspace_id=workspace_id, name=name, role=role, groups=groups, created_ms=now_ms(),
            email=email, slack_id=slack_id,
        )  # fmt: skip

        async def job(tx: GroupTx) -> UserInfo:
            if await (await tx.execute(Q["user_exists"], (workspace_id, name))).fetchone():
                raise ConfigError(f"user {name!r} already exists (rotate the token with: escalated users token {name})")
            for query, value, what in (("user_by_email", email, "email"), ("user_by_slack_id", slack_id, "Slack id")):
                if value is not None and (row := await (await tx.execute(Q[query], (workspace_id, value))).fetchone()):
                    raise ConfigError(contact_taken(what, value, owner=user_from_row(row).name))
            params = (
                user.id, workspace_id, name, role, orjson.dumps(list(groups)).decode(), token_hash, user.created_ms,
                email, slack_id,
            )  # fmt: skip
            await _change_config(tx, sql=Q["create_user"], params=params)
            return user

        return await self._config_write(job)

    async def user_by_email(self, *, workspace_id: str, email: str) -> UserInfo | None:
        row = await self._fetchone(Q["user_by_email"], (workspace_id, email))
        return None if row is None else user_from_row(row)

    async def user_by_slack_id(self, *, workspace_id: str, slack_id: str) -> UserInfo | None:
        row = await self._fetchone(Q["user_by_slack_id"], (workspace_id, slack_id))
        return None if row is None else user_from_row(row)

    async def rotate_user_token(self, *, workspace_id: str, name: str, token_hash: str) -> None:
        async def job(tx: GroupTx) -> None:
            if await _change_config(tx, sql=Q["rotate_user_token"], params=(token_hash, workspace_id, name)) == 0:
                raise ConfigError(f"no user named {name!r} in this workspace")

        await self._config_write(job)

    # -- web sessions and sign-in links -----------------------------------------

    async def session_user(self, *, id_hash: str) -> tuple[UserInfo, int, int] | None:
        row = await self._fetchone(Q["session_user"], (id_hash,))
        return None if row is None else (user_from_row(row[:-2]), row[-2], row[-1])

    async def start_session(self, *, id_hash: str, user_id: str, user_token_hash: str, at_ms: int) -> None:
        await self._writer.submit(
            _execute, sql=Q["start_session"], params=(id_hash, user_id, user_token_hash, at_ms, at_ms)
        )

    async def touch_session(self, *, id_hash: str, at_ms: int) -> None:
        await self._writer.submit(_execute, sql=Q["touch_session"], params=(at_ms, id_hash))

    async def end_session(self, *, id_hash: str, at_ms: int) -> None:
        await self._writer.submit(_execute, sql=Q["end_session"], params=(at_ms, id_hash))

    async def add_login_link(self, *, secret_hash: str, workspace_id: str, name: str, at_ms: int, expires_ms: int) -> None:
        async def job(tx: GroupTx) -> None:
            row = await (await tx.execute(Q["user_id_and_token_hash"], (workspace_id, name))).fetchone()
            if row is None:
                raise ConfigError(f"no user named {name!r} in this workspace (add one with: escalated users add {name})")
            await tx.execute(Q["create_login_link"], (secret_hash, row[0], row[1], at_ms, expires_ms))

        await self._writer.submit(job)

    async def redeem_login_link(self, *, secret_hash: str, session_hash: str, at_ms: int) -> UserInfo | None:
        async def job(tx: GroupTx) -> UserInfo | None:
            if await tx.changed(Q["use_login_link"], (at_ms, secret_hash, at_ms)) != 1:
                return None
            row = await (await tx.execute(Q["login_link_user"], (secret_hash,))).fetchone()
            if row is None:
                return None
            await tx.execute(Q["start_session"], (session_hash, row[0], row[-1], at_ms, at_ms))
            return user_from_row(row[:-1])

        return await self._writer.submit(job)
