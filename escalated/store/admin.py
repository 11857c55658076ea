"""Workspaces, API keys, users and policies: the part of the one store the
admin surfaces use, written once over a ``Connector``.

Secrets are minted by the core: only hashes arrive here. The three rows
read on every request (key or user by token hash, policy) come through
``connector.kept``, which keeps them as the dialect may; every write to
keys, users or policies is a ``config_write``, so whatever is kept is
forgotten once it commits (on PostgreSQL, on every replica). Adds too: a
miss is not kept on PostgreSQL, but the rule is "the table changed", not
a guess about what a cache holds.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from escalated.domain.contacts import contact_taken
from escalated.domain.ids import new_id
from escalated.domain.models import ApiKeyInfo, Policy, UserInfo, Workspace
from escalated.errors import ConfigError, NotFound
from escalated.store.connector import Connector, Tx
from escalated.store.rows import key_from_row, policy_from_row, review_to_json, user_from_row, workspace_from_row
from escalated.timeutil import now_ms


class AdminPart:
    """Mixed into ``SqlStore``."""

    _c: Connector

    # -- per-request look-ups -------------------------------------------------------

    async def policy(self, *, workspace_id: str, key: str) -> Policy | None:
        params = {"workspace_id": workspace_id, "key": key}
        return await self._c.kept(("policy", workspace_id, key), self._c.q["get_policy"], params, policy_from_row)

    async def api_key_by_hash(self, *, token_hash: str) -> ApiKeyInfo | None:
        params = {"token_hash": token_hash}
        return await self._c.kept(("key", token_hash), self._c.q["key_by_hash"], params, key_from_row)

    def kept_policy(self, *, workspace_id: str, key: str) -> Policy | None:
        policy = self._c.kept_now(("policy", workspace_id, key))
        return policy if isinstance(policy, Policy) else None

    def kept_api_key(self, *, token_hash: str) -> ApiKeyInfo | None:
        key = self._c.kept_now(("key", token_hash))
        return key if isinstance(key, ApiKeyInfo) else None

    async def user_by_hash(self, *, token_hash: str) -> UserInfo | None:
        params = {"token_hash": token_hash}
        return await self._c.kept(("user", token_hash), self._c.q["user_by_hash"], params, user_from_row)

    # -- API keys -------------------------------------------------------------------

    async def api_key(self, *, key_id: str, workspace_id: str) -> ApiKeyInfo | None:
        row = await self._c.one(self._c.q["key_by_id"], {"id": key_id, "workspace_id": workspace_id})
        return None if row is None else key_from_row(row)

    async def api_keys(self, *, workspace_id: str | None) -> list[ApiKeyInfo]:
        if workspace_id is None:
            return [key_from_row(r) for r in await self._c.all(self._c.q["all_keys"])]
        return [key_from_row(r) for r in await self._c.all(self._c.q["keys_of_workspace"], {"workspace_id": workspace_id})]

    async def add_api_key(
        self, *, workspace_id: str, token_hash: str, name: str | None, scopes: frozenset[str], expires_ms: int | None
    ) -> ApiKeyInfo:
        info = ApiKeyInfo(
            id=new_id("key"), workspace_id=workspace_id, name=name, scopes=scopes, created_ms=now_ms(), expires_ms=expires_ms
        )
        await self._c.config_write(self._insert_key, info=info, token_hash=token_hash)
        return info

    async def add_first_api_key(
        self, *, workspace_id: str, token_hash: str, name: str, scopes: frozenset[str], before_commit: Callable[[], None]
    ) -> ApiKeyInfo | None:
        info = ApiKeyInfo(id=new_id("key"), workspace_id=workspace_id, name=name, scopes=scopes, created_ms=now_ms())
        q = self._c.q

        async def job(tx: Tx) -> ApiKeyInfo | None:
            await tx.run(q["lock_bootstrap"])  # processes starting together: one key, not one each
            if await tx.one(q["workspace_has_key"], {"workspace_id": workspace_id}) is not None:
                return None
            await self._insert_key(tx, info=info, token_hash=token_hash)
            before_commit()
            return info

        return await self._c.config_write(job)

    async def _insert_key(self, tx: Tx, *, info: ApiKeyInfo, token_hash: str) -> None:
        params = {
            "id": info.id, "workspace_id": info.workspace_id, "name": info.name, "token_hash": token_hash,
            "scopes": " ".join(sorted(info.scopes)), "created_ms": info.created_ms, "expires_ms": info.expires_ms,
        }  # fmt: skip
        await tx.run(self._c.q["create_key"], params)

    async def revoke_api_key(self, *, key_id: str, workspace_id: str | None) -> None:
        q = self._c.q

        async def job(tx: Tx) -> None:
            params = {"at_ms": now_ms(), "id": key_id, "workspace_id": workspace_id}
            changed = await tx.changed(q["revoke_key" if workspace_id is None else "revoke_key_in_workspace"], params)
            if changed == 0 and await tx.one(q["key_exists"], {"id": key_id}) is None:
                raise NotFound(f"no API key {key_id}")

        await self._c.config_write(job)

    # -- workspaces -----------------------------------------------------------------

    async def workspace_by_name(self, *, name: str) -> Workspace:
        row = await self._c.one(self._c.q["workspace_by_name"], {"name": name})
        if row is None:
            raise ConfigError(f"no workspace named {name!r} (see: escalated workspaces list)")
        return workspace_from_row(row)

    async def workspaces(self) -> list[Workspace]:
        return [workspace_from_row(r) for r in await self._c.all(self._c.q["list_workspaces"])]

    async def create_workspace(self, *, name: str) -> Workspace:
        workspace = Workspace(id=new_id("wsp"), name=name)
        q = self._c.q

        async def job(tx: Tx) -> Workspace:
            if await tx.one(q["workspace_by_name"], {"name": name}):
                raise ConfigError(f"workspace {name!r} already exists")
            await tx.run(q["create_workspace"], {"id": workspace.id, "name": name, "created_ms": now_ms()})
            return workspace

        return await self._c.write(job)

    # -- policies -------------------------------------------------------------------

    async def put_policy(self, *, policy: Policy) -> None:
        await self._c.config_write(self._put_policy, policy=policy)

    async def _put_policy(self, tx: Tx, *, policy: Policy) -> None:
        params = {
            "workspace_id": policy.workspace_id, "key": policy.key,
            "reviewers_json": orjson.dumps(list(policy.reviewers)).decode(),
            "notify_json": orjson.dumps(list(policy.notify)).decode(), "sla_s": policy.sla_s,
            "default_choice": policy.default_choice, "cancel_callback": bool(policy.cancel_callback),
            "review_json": review_to_json(policy.review), "updated_ms": now_ms(),
        }  # fmt: skip
        await tx.run(self._c.q["put_policy"], params)

    async def put_policies(self, *, workspace_id: str, policies: list[Policy], prune: bool) -> list[str]:
        q = self._c.q

        async def job(tx: Tx) -> list[str]:
            for policy in policies:
                await self._put_policy(tx, policy=policy)
            if not prune:
                return []
            keep = {p.key for p in policies}
            rows = await tx.all(q["policies_of_workspace"], {"workspace_id": workspace_id})
            pruned = [key for key in (policy_from_row(r).key for r in rows) if key not in keep]
            for key in pruned:
                await tx.run(q["delete_policy"], {"workspace_id": workspace_id, "key": key})
            return pruned

        return await self._c.config_write(job)

    async def policies(self, *, workspace_id: str) -> list[Policy]:
        rows = await self._c.all(self._c.q["policies_of_workspace"], {"workspace_id": workspace_id})
        return [policy_from_row(r) for r in rows]

    async def delete_policy(self, *, workspace_id: str, key: str) -> bool:
        if "\x00" in key:  # no policy has this key (and PostgreSQL's text cannot hold NUL)
            return False
        q = self._c.q

        async def job(tx: Tx) -> bool:
            return await tx.changed(q["delete_policy"], {"workspace_id": workspace_id, "key": key}) > 0

        return await self._c.config_write(job)

    # -- users ----------------------------------------------------------------------

    async def users(self, *, workspace_id: str) -> list[UserInfo]:
        rows = await self._c.all(self._c.q["users_of_workspace"], {"workspace_id": workspace_id})
        return [user_from_row(r) for r in rows]

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
        q = self._c.q

        async def job(tx: Tx) -> UserInfo:
            if await tx.one(q["user_exists"], {"workspace_id": workspace_id, "name": name}):
                raise ConfigError(f"user {name!r} already exists (rotate the token with: escalated users token {name})")
            for query, field, value, what in (
                ("user_by_email", "email", email, "email"),
                ("user_by_slack_id", "slack_id", slack_id, "Slack id"),
            ):
                if value is not None and (row := await tx.one(q[query], {"workspace_id": workspace_id, field: value})):
                    raise ConfigError(contact_taken(what, value, owner=user_from_row(row).name))
            params = {
                "id": user.id, "workspace_id": workspace_id, "name": name, "role": role,
                "groups_json": orjson.dumps(list(groups)).decode(), "token_hash": token_hash,
                "created_ms": user.created_ms, "email": email, "slack_id": slack_id,
            }  # fmt: skip
            await tx.run(q["create_user"], params)
            return user

        return await self._c.config_write(job)

    async def user_by_email(self, *, workspace_id: str, email: str) -> UserInfo | None:
        row = await self._c.one(self._c.q["user_by_email"], {"workspace_id": workspace_id, "email": email})
        return None if row is None else user_from_row(row)

    async def user_by_slack_id(self, *, workspace_id: str, slack_id: str) -> UserInfo | None:
        row = await self._c.one(self._c.q["user_by_slack_id"], {"workspace_id": workspace_id, "slack_id": slack_id})
        return None if row is None else user_from_row(row)

    async def rotate_user_token(self, *, workspace_id: str, name: str, token_hash: str) -> None:
        q = self._c.q

        async def job(tx: Tx) -> None:
            params = {"token_hash": token_hash, "workspace_id": workspace_id, "name": name}
            if await tx.changed(q["rotate_user_token"], params) == 0:
                raise ConfigError(f"no user named {name!r} in this workspace")

        await self._c.config_write(job)
