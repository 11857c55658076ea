"""Reviewer operations on PostgreSQL (CONTRACT §15): claims and assignments,
and remembered decisions. The same named queries as SQLite's
``store/sqlite/reviewerops.py``; transitions are compare-and-set on ``status`` as
in jobs.py, so a claim racing a decision on another replica loses cleanly.
"""

from __future__ import annotations

from escalated.domain.models import Delivery, Resolution
from escalated.domain.rules import Rule
from escalated.errors import InvalidState
from escalated.store import queries
from escalated.store.postgres.parts import StoreParts
from escalated.store.postgres.writer import GroupTx
from escalated.store.postgres import jobs
from escalated.store.rows import rule_params

Q = queries.load("postgres")


class ReviewerOpsQueries(StoreParts):
    """Mixed into ``PostgresStore``: uses its ``_writer``, ``_fetchall`` and ``_fetchone``."""

    async def assign(
        self, *, escalation_id: str, assignee: str | None, by: str, event: str, acknowledge: bool, at_ms: int
    ) -> bool:
        async def job(tx: GroupTx) -> bool:
            acknowledged = acknowledge and await tx.changed(Q["acknowledge"], (by, at_ms, escalation_id)) == 1
            if acknowledged:
                jobs.add_history(tx, escalation_id=escalation_id, event="acknowledged", by=by, at_ms=at_ms)
            if await tx.changed(Q["assign"], (assignee, escalation_id)) != 1:
                row = await (await tx.execute(Q["escalation_status"], (escalation_id,))).fetchone()
                status = row[0] if row else "missing"
                raise InvalidState(f"escalation is {status}", current_status=status)
            jobs.add_history(tx, escalation_id=escalation_id, event=event, by=by, at_ms=at_ms)
            return acknowledged

        return await self._writer.submit(job)

    async def add_rule(self, *, rule: Rule) -> None:
        async def job(tx: GroupTx) -> None:
            await tx.execute(Q["add_rule"], rule_params(rule))

        await self._writer.submit(job)

    async def revoke_rule(self, *, rule_id: str, workspace_id: str, by: str, at_ms: int) -> bool:
        async def job(tx: GroupTx) -> bool:
            return await tx.changed(Q["revoke_rule"], (by, at_ms, rule_id, workspace_id)) == 1

        return await self._writer.submit(job)

    async def resolve_by_rule(
        self, *, escalation_id: str, resolution: Resolution, callback: Delivery | None, rule_id: str
    ) -> None:
        async def job(tx: GroupTx) -> None:
            await jobs.resolve(tx, escalation_id=escalation_id, resolution=resolution, history_event="decided", callback=callback)
            await tx.execute(Q["add_rule_use"], (rule_id, escalation_id, resolution.answered_at_ms))

        await self._writer.submit(job)
