"""Reading escalations, deliveries and rules: the part of the one store
every read path uses, written once over a ``Connector``.

An escalation is read with its history in one statement (its history as
one JSON array); a list asks for one row more than the page, to tell
whether another page follows (statements.py). The active rules of a
policy are read on every create, so through ``kept_all``.
"""

from __future__ import annotations

from typing import Any

from escalated.domain.models import Delivery, Escalation
from escalated.domain.records import ListQuery, Replay
from escalated.domain.rules import Rule
from escalated.store.connector import Connector, Row
from escalated.store.rows import delivery_from_row, escalation_with_history, replay_from_row, rule_from_row
from escalated.store.statements import get_statement, list_statement, page_of

# Ids per read of ``get_escalations``: SQLite's JSON text of ids stays small.
GET_MANY_CHUNK = 500


class ReadsPart:
    """Mixed into ``SqlStore``."""

    _c: Connector

    async def find_replay(self, *, workspace_id: str, key: str, not_before_ms: int) -> Replay | None:
        params = {"workspace_id": workspace_id, "key": key, "not_before_ms": not_before_ms}
        row = await self._c.one(self._c.q["find_replay"], params)
        return replay_from_row(row) if row else None

    async def get_escalation(
        self, *, escalation_id: str, workspace_id: str | None, routes: tuple[str, ...] | None
    ) -> Escalation | None:
        sql, params = get_statement(escalation_id, self._c.q, workspace_id=workspace_id, routes=routes)
        row = await self._c.one(sql, params)
        return None if row is None else escalation_with_history(row)

    async def get_escalations(self, *, escalation_ids: list[str]) -> list[Escalation]:
        out: list[Escalation] = []
        for start in range(0, len(escalation_ids), GET_MANY_CHUNK):
            rows = await self._c.all(self._c.q["get_escalations"], {"ids": escalation_ids[start : start + GET_MANY_CHUNK]})
            out.extend(escalation_with_history(r) for r in rows)
        return out

    async def list_escalations(self, *, query: ListQuery) -> tuple[list[Escalation], str | None]:
        sql, params = list_statement(query, self._c.q)
        rows = await self._c.all(sql, params)
        return page_of([escalation_with_history(r) for r in rows], limit=query.limit)

    async def count_by_status(self, *, workspace_id: str, routes: tuple[str, ...] | None) -> dict[str, int]:
        q = self._c.q
        sql = q["count_by_status"]
        params: dict[str, Any] = {"workspace_id": workspace_id}
        if routes is not None:
            sql += q["routed_to"]
            params["routes"] = list(routes)
        return dict(await self._c.all(sql + q["group_by_status"], params))

    async def deadlines_between(self, *, after_ms: int | None, until_ms: int, limit: int) -> list[tuple[int, str]]:
        """Live deadlines in (after, until], oldest first, from the partial index."""
        params = {"after_ms": after_ms, "until_ms": until_ms, "limit": limit}
        rows = await self._c.all(self._c.q["deadlines_until" if after_ms is None else "deadlines_between"], params)
        return [(r[0], r[1]) for r in rows]

    async def nudges_until(self, *, until_ms: int, limit: int) -> list[str]:
        return [r[0] for r in await self._c.all(self._c.q["nudges_until"], {"until_ms": until_ms, "limit": limit})]

    async def next_nudge(self) -> int | None:
        row = await self._c.one(self._c.q["next_nudge"])
        assert row is not None  # an aggregate: always one row
        at_ms: int | None = row[0]
        return at_ms

    # -- the outbox -------------------------------------------------------------------

    async def count_pending_deliveries(self) -> int:
        row = await self._c.one(self._c.q["count_pending_deliveries"])
        return int(row[0]) if row is not None else 0

    async def pending_deliveries(self, *, limit: int, exclude: set[str]) -> list[Delivery]:
        """Pending deliveries in due order, skipping ``exclude`` (those in flight).

        One query answers both of the sender's questions: what is due now (a
        prefix of the list) and, from the first row that is not, when to wake.
        """
        rows = await self._c.all(self._c.q["pending_deliveries"], {"exclude": list(exclude), "limit": limit})
        return [delivery_from_row(r) for r in rows]

    async def deliveries_of(self, *, escalation_id: str) -> list[Delivery]:
        rows = await self._c.all(self._c.q["deliveries_of_escalation"], {"escalation_id": escalation_id})
        return [delivery_from_row(r) for r in rows]

    # -- remembered decisions -----------------------------------------------------------

    async def rules(self, *, workspace_id: str) -> list[Rule]:
        return [rule_from_row(r) for r in await self._c.all(self._c.q["rules_of_workspace"], {"workspace_id": workspace_id})]

    async def rule(self, *, rule_id: str, workspace_id: str) -> Rule | None:
        row = await self._c.one(self._c.q["rule_by_id"], {"id": rule_id, "workspace_id": workspace_id})
        return None if row is None else rule_from_row(row)

    async def active_rules(self, *, workspace_id: str, policy: str, at_ms: int) -> list[Rule]:
        sql, params = self._c.q["active_rules"], {"workspace_id": workspace_id, "policy": policy, "at_ms": at_ms}

        def read(rows: list[Row]) -> tuple[int, list[Rule]]:
            return at_ms, [rule_from_row(r) for r in rows]

        read_at_ms, rules = await self._c.kept_all(("rules", workspace_id, policy), sql, params, read)
        if at_ms < read_at_ms:  # asked about an earlier time than the kept read: it may lack rules expired since
            return [rule_from_row(r) for r in await self._c.hot_all(sql, params)]
        return [r for r in rules if r.expires_ms > at_ms]

    def kept_no_rules(self, *, workspace_id: str, policy: str, at_ms: int) -> bool:
        kept = self._c.kept_now(("rules", workspace_id, policy))
        if not isinstance(kept, tuple):  # NOT_KEPT
            return False
        read_at_ms, rules = kept
        return at_ms >= read_at_ms and not any(r.expires_ms > at_ms for r in rules)

    async def unanswered_by_rules(self, *, since_ms: int, before_ms: int, limit: int) -> list[tuple[int, str]]:
        params = {"since_ms": since_ms, "before_ms": before_ms, "limit": limit}
        return [(int(r[0]), str(r[1])) for r in await self._c.all(self._c.q["unanswered_by_rules"], params)]
