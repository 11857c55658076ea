"""Email decision links on PostgreSQL (issue #16): the part of ``PostgresStore``
behind the core's ``DecisionLinks``. The same named queries as SQLite's
``store/sqlite/decisionlinks.py``; only hashes of the secrets arrive here.
"""

from __future__ import annotations

from escalated.domain.models import DecisionLink, NewDecisionLink
from escalated.store import queries
from escalated.store.postgres.parts import StoreParts
from escalated.store.postgres.writer import GroupTx
from escalated.store.rows import decision_link_from_row

Q = queries.load("postgres")


class DecisionLinkQueries(StoreParts):
    """Mixed into ``PostgresStore``: uses its ``_writer`` and ``_fetchone``."""

    async def add_decision_links(self, *, delivery_id: str, links: list[NewDecisionLink], at_ms: int) -> None:
        async def job(tx: GroupTx) -> None:
            await tx.execute(Q["replace_decision_links"], (at_ms, delivery_id))
            for k in links:
                params = (k.secret_hash, delivery_id, k.escalation_id, k.user_id, k.choice, at_ms, k.expires_ms)
                await tx.execute(Q["add_decision_link"], params)

        await self._writer.submit(job)

    async def decision_link(self, *, secret_hash: str) -> DecisionLink | None:
        row = await self._fetchone(Q["decision_link"], (secret_hash,))
        return None if row is None else decision_link_from_row(row)

    async def use_decision_link(self, *, secret_hash: str, at_ms: int) -> bool:
        async def job(tx: GroupTx) -> bool:
            return await tx.changed(Q["use_decision_link"], (at_ms, secret_hash, at_ms)) == 1

        return await self._writer.submit(job)
