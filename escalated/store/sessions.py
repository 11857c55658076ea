"""Web app sessions, single-use sign-in links (CONTRACT §11) and email
decision links: the part of the one store the web app uses, written once
over a ``Connector``.

Only hashes of the secrets are stored; the core mints them. A session or
link is bound to the user's token hash when it was made, so a rotation of
the token ends them all at once. Single use is a compare-and-set on
``used_ms`` in the write transaction, across replicas too.
"""

from __future__ import annotations

from escalated.domain.models import DecisionLink, NewDecisionLink, UserInfo
from escalated.errors import ConfigError
from escalated.store.connector import Connector, Tx
from escalated.store.rows import decision_link_from_row, user_from_row


class SessionsPart:
    """Mixed into ``SqlStore``."""

    _c: Connector

    async def session_user(self, *, id_hash: str) -> tuple[UserInfo, int, int] | None:
        row = await self._c.hot_one(self._c.q["session_user"], {"id_hash": id_hash})  # read on every page view
        return None if row is None else (user_from_row(row[:-2]), row[-2], row[-1])

    async def start_session(self, *, id_hash: str, user_id: str, user_token_hash: str, at_ms: int) -> None:
        await self._c.write(self._start_session, id_hash=id_hash, user_id=user_id, user_token_hash=user_token_hash, at_ms=at_ms)

    async def _start_session(self, tx: Tx, *, id_hash: str, user_id: str, user_token_hash: str, at_ms: int) -> None:
        params = {"id_hash": id_hash, "user_id": user_id, "user_token_hash": user_token_hash, "at_ms": at_ms}
        await tx.run(self._c.q["start_session"], params)

    async def touch_session(self, *, id_hash: str, at_ms: int) -> None:
        await self._c.write(self._run, sql=self._c.q["touch_session"], params={"at_ms": at_ms, "id_hash": id_hash})

    async def end_session(self, *, id_hash: str, at_ms: int) -> None:
        await self._c.write(self._run, sql=self._c.q["end_session"], params={"at_ms": at_ms, "id_hash": id_hash})

    @staticmethod
    async def _run(tx: Tx, *, sql: str, params: dict[str, object]) -> None:
        await tx.run(sql, params)

    async def add_login_link(self, *, secret_hash: str, workspace_id: str, name: str, at_ms: int, expires_ms: int) -> None:
        q = self._c.q

        async def job(tx: Tx) -> None:
            row = await tx.one(q["user_id_and_token_hash"], {"workspace_id": workspace_id, "name": name})
            if row is None:
                raise ConfigError(f"no user named {name!r} in this workspace (add one with: escalated users add {name})")
            params = {
                "secret_hash": secret_hash, "user_id": row[0], "user_token_hash": row[1], "at_ms": at_ms,
                "expires_ms": expires_ms,
            }  # fmt: skip
            await tx.run(q["create_login_link"], params)

        await self._c.write(job)

    async def redeem_login_link(self, *, secret_hash: str, session_hash: str, at_ms: int) -> UserInfo | None:
        q = self._c.q

        async def job(tx: Tx) -> UserInfo | None:
            if await tx.changed(q["use_login_link"], {"at_ms": at_ms, "secret_hash": secret_hash}) != 1:
                return None
            row = await tx.one(q["login_link_user"], {"secret_hash": secret_hash})
            if row is None:
                return None
            await self._start_session(tx, id_hash=session_hash, user_id=row[0], user_token_hash=row[-1], at_ms=at_ms)
            return user_from_row(row[:-1])

        return await self._c.write(job)

    # -- email decision links ---------------------------------------------------------

    async def add_decision_links(self, *, delivery_id: str, links: list[NewDecisionLink], at_ms: int) -> None:
        """The email's earlier unused links are replaced in the same transaction."""
        q = self._c.q

        async def job(tx: Tx) -> None:
            await tx.run(q["replace_decision_links"], {"at_ms": at_ms, "delivery_id": delivery_id})
            await tx.run_many(
                q["add_decision_link"],
                [
                    {
                        "secret_hash": k.secret_hash, "delivery_id": delivery_id, "escalation_id": k.escalation_id,
                        "user_id": k.user_id, "choice": k.choice, "created_ms": at_ms, "expires_ms": k.expires_ms,
                    }
                    for k in links
                ],
            )

        await self._c.write(job)

    async def decision_link(self, *, secret_hash: str) -> DecisionLink | None:
        row = await self._c.one(self._c.q["decision_link"], {"secret_hash": secret_hash})
        return None if row is None else decision_link_from_row(row)

    async def use_decision_link(self, *, secret_hash: str, at_ms: int) -> bool:
        q = self._c.q

        async def job(tx: Tx) -> bool:
            return await tx.changed(q["use_decision_link"], {"at_ms": at_ms, "secret_hash": secret_hash}) == 1

        return await self._c.write(job)
