"""Transitions, the outbox's writes, reviewer operations and quorum votes:
the part of the one store that changes escalations, written once as write
jobs over a ``Tx``.

Every transition is a compare-and-set on ``status`` inside the write
transaction: whichever transition commits first wins, the others see a
changed status and fail with ``InvalidState``. That, not timing, is what
makes "resolved exactly once" true, in one process (SQLite's one writer
runs every job in turn) and across replicas (on PostgreSQL an update that
meets a concurrent one waits for its COMMIT and re-checks the condition;
``approvals_of_live`` locks the row, so two last votes meet the quorum
once). A delivery owed by a change is written in the same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from escalated.domain.convert import converter
from escalated.domain.models import (
    ACKNOWLEDGED,
    DELIVERED,
    FAILED,
    PENDING,
    Approval,
    Attempt,
    Cancellation,
    Delivery,
    Resolution,
)
from escalated.domain.review import Nudge
from escalated.domain.rules import Rule
from escalated.errors import AlreadyApproved, InvalidState
from escalated.store.base import Resolve
from escalated.store.connector import Connector, Tx
from escalated.store.rows import (
    approvals_from_json,
    approvals_to_json,
    delivery_from_row,
    delivery_params,
    rule_params,
    to_json_text,
)


class WritesPart:
    """Mixed into ``SqlStore``."""

    _c: Connector

    # -- the steps every transition shares ------------------------------------------------

    async def _current_status(self, tx: Tx, escalation_id: str) -> str:
        row = await tx.one(self._c.q["escalation_status"], {"id": escalation_id})
        return row[0] if row else "missing"

    async def _refuse(self, tx: Tx, escalation_id: str) -> InvalidState:
        status = await self._current_status(tx, escalation_id)
        return InvalidState(f"escalation is {status}", current_status=status)

    async def _end(self, tx: Tx, *, query: str, escalation_id: str, record: Resolution | Cancellation) -> bool:
        """Open/acknowledged -> a terminal status: the compare-and-set every ending goes through."""
        return await tx.changed(self._c.q[query], {"record_json": to_json_text(record), "id": escalation_id}) == 1

    async def _resolved(
        self, tx: Tx, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
    ) -> None:
        by, at_ms = resolution.answered_by, resolution.answered_at_ms
        await tx.history(escalation_id=escalation_id, event=history_event, by=by, at_ms=at_ms)
        if callback is not None:
            await self._add_deliveries(tx, [callback])

    async def _add_deliveries(self, tx: Tx, deliveries: list[Delivery]) -> None:
        await tx.run_many(self._c.q["add_delivery"], [delivery_params(d) for d in deliveries])

    async def _resolve(
        self, tx: Tx, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
    ) -> None:
        if not await self._end(tx, query="resolve", escalation_id=escalation_id, record=resolution):
            raise await self._refuse(tx, escalation_id)
        await self._resolved(
            tx, escalation_id=escalation_id, resolution=resolution, history_event=history_event, callback=callback
        )

    # -- transitions -----------------------------------------------------------------------

    async def acknowledge(self, *, escalation_id: str, by: str, at_ms: int) -> bool:
        return await self._c.write(self._acknowledge, escalation_id=escalation_id, by=by, at_ms=at_ms)

    async def _acknowledge(self, tx: Tx, *, escalation_id: str, by: str, at_ms: int) -> bool:
        """Open -> acknowledged. Idempotent: True only for the first acknowledger."""
        if await tx.changed(self._c.q["acknowledge"], {"by": by, "at_ms": at_ms, "id": escalation_id}) == 1:
            await tx.history(escalation_id=escalation_id, event="acknowledged", by=by, at_ms=at_ms)
            return True
        status = await self._current_status(tx, escalation_id)
        if status != ACKNOWLEDGED:
            raise InvalidState(f"escalation is {status}", current_status=status)
        return False

    async def resolve(
        self, *, escalation_id: str, resolution: Resolution, history_event: str, callback: Delivery | None
    ) -> None:
        await self._c.write(
            self._resolve,
            escalation_id=escalation_id, resolution=resolution, history_event=history_event, callback=callback,
        )  # fmt: skip

    async def resolve_many(self, *, items: list[Resolve]) -> list[str]:
        async def job(tx: Tx) -> list[str]:
            done = []
            for escalation_id, resolution, history_event, callback in items:
                if not await self._end(tx, query="resolve", escalation_id=escalation_id, record=resolution):
                    continue  # a decision took it first
                await self._resolved(
                    tx, escalation_id=escalation_id, resolution=resolution, history_event=history_event, callback=callback
                )
                done.append(escalation_id)
            return done

        return await self._c.write(job)

    async def cancel(self, *, escalation_id: str, cancellation: Cancellation, callback: Delivery | None) -> None:
        async def job(tx: Tx) -> None:
            if not await self._end(tx, query="cancel", escalation_id=escalation_id, record=cancellation):
                raise await self._refuse(tx, escalation_id)
            by, at_ms = cancellation.cancelled_by, cancellation.cancelled_at_ms
            await tx.history(escalation_id=escalation_id, event="cancelled", by=by, at_ms=at_ms)
            if callback is not None:
                await self._add_deliveries(tx, [callback])

        await self._c.write(job)

    # -- reviewer operations (CONTRACT §15) -----------------------------------------------------

    async def assign(
        self, *, escalation_id: str, assignee: str | None, by: str, event: str, acknowledge: bool, at_ms: int
    ) -> bool:
        q = self._c.q

        async def job(tx: Tx) -> bool:
            acknowledged = (
                acknowledge and await tx.changed(q["acknowledge"], {"by": by, "at_ms": at_ms, "id": escalation_id}) == 1
            )
            if acknowledged:
                await tx.history(escalation_id=escalation_id, event="acknowledged", by=by, at_ms=at_ms)
            if await tx.changed(q["assign"], {"assignee": assignee, "id": escalation_id}) != 1:
                raise await self._refuse(tx, escalation_id)
            await tx.history(escalation_id=escalation_id, event=event, by=by, at_ms=at_ms)
            return acknowledged

        return await self._c.write(job)

    async def add_rule(self, *, rule: Rule) -> None:
        await self._c.write(_run, sql=self._c.q["add_rule"], params=rule_params(rule))

    async def revoke_rule(self, *, rule_id: str, workspace_id: str, by: str, at_ms: int) -> bool:
        """False when it was revoked already (the first revocation is kept)."""
        params = {"by": by, "at_ms": at_ms, "id": rule_id, "workspace_id": workspace_id}
        return await self._c.write(_changed_one, sql=self._c.q["revoke_rule"], params=params)

    async def resolve_by_rule(
        self, *, escalation_id: str, resolution: Resolution, callback: Delivery | None, rule_id: str
    ) -> None:
        async def job(tx: Tx) -> None:
            await self._resolve(
                tx, escalation_id=escalation_id, resolution=resolution, history_event="decided", callback=callback
            )
            params = {"rule_id": rule_id, "escalation_id": escalation_id, "at_ms": resolution.answered_at_ms}
            await tx.run(self._c.q["add_rule_use"], params)

        await self._c.write(job)

    async def approve(
        self, *, escalation_id: str, approval: Approval, quorum: int, resolution: Resolution, callback: Delivery | None
    ) -> tuple[Approval, ...]:
        q = self._c.q

        async def job(tx: Tx) -> tuple[Approval, ...]:
            row = await tx.one(q["approvals_of_live"], {"id": escalation_id})
            if row is None:  # ended since it was read
                raise await self._refuse(tx, escalation_id)
            approvals = approvals_from_json(row[0])
            if any(a.by == approval.by for a in approvals):
                raise AlreadyApproved(f"{approval.by} already approved this escalation")
            approvals = (*approvals, approval)
            await tx.run(q["set_approvals"], {"approvals_json": approvals_to_json(approvals), "id": escalation_id})
            if sum(a.choice == approval.choice for a in approvals) < quorum:
                await tx.history(escalation_id=escalation_id, event="approved", by=approval.by, at_ms=approval.at_ms)
                return approvals
            await self._resolve(
                tx, escalation_id=escalation_id, resolution=resolution, history_event="decided", callback=callback
            )
            return approvals

        return await self._c.write(job)

    async def nudge_many(self, *, items: list[Nudge]) -> list[str]:
        q = self._c.q

        async def job(tx: Tx) -> list[str]:
            done = []
            for n in items:
                params = {
                    "level": n.level, "remind_ms": n.remind_ms, "nudge_ms": n.nudge_ms, "id": n.escalation_id,
                    "expected_ms": n.expected_ms,
                }  # fmt: skip
                if await tx.changed(q["nudge"], params) != 1:
                    continue  # the row moved on since it was read
                await tx.run_many(q["add_route_if_new"], [{"route": r, "escalation_id": n.escalation_id} for r in n.routes])
                for h in n.history:
                    await tx.history(escalation_id=n.escalation_id, event=h.event, by=h.by, at_ms=h.at_ms)
                await self._add_deliveries(tx, list(n.notifications))
                done.append(n.escalation_id)
            return done

        return await self._c.write(job)

    # -- the outbox -------------------------------------------------------------------------

    async def claim_deliveries(self, *, delivery_ids: list[str], at_ms: int, lease_ms: int) -> dict[str, int | None]:
        """One process is the only sender: every id, no token. Replicas take
        leases; the lease's end is the claim's fencing token."""
        if not self._c.shared:
            return dict.fromkeys(delivery_ids)
        token = at_ms + lease_ms
        params = {"token": token, "ids": delivery_ids, "at_ms": at_ms}
        rows = await self._c.write(_all, sql=self._c.q["claim_deliveries"], params=params)
        return {row[0]: token for row in rows}

    async def record_attempt(
        self, *, delivery_id: str, attempt: Attempt, status: str, next_attempt_ms: int | None, token: int | None = None
    ) -> None:
        """On PostgreSQL only while the claim's ``token`` still stands (SQLite's one sender has no claims)."""
        params = {
            "attempt_json": orjson.dumps(converter.unstructure(attempt)).decode(), "status": status,
            "next_attempt_ms": next_attempt_ms if status == PENDING else None, "id": delivery_id, "token": token,
        }  # fmt: skip
        await self._c.write(_run, sql=self._c.q["record_attempt"], params=params)

    async def defer_deliveries(self, *, delivery_ids: list[str], until_ms: int) -> None:
        await self._c.write(_run, sql=self._c.q["defer_deliveries"], params={"until_ms": until_ms, "ids": delivery_ids})

    async def requeue_callback(self, *, escalation_id: str, at_ms: int) -> Delivery:
        q = self._c.q

        async def job(tx: Tx) -> Delivery:
            row = await tx.one(q["callback_of_escalation"], {"escalation_id": escalation_id})
            if row is None:
                raise InvalidState("this escalation has no callback to deliver (not resolved, or no resume target)")
            delivery = delivery_from_row(row)
            due = delivery.next_attempt_ms
            if delivery.status in (FAILED, DELIVERED) or due is None or due > at_ms:  # a fresh retry window
                await tx.run(q["requeue_delivery"], {"at_ms": at_ms, "id": delivery.id})
            row = await tx.one(q["get_delivery"], {"id": delivery.id})
            assert row is not None  # read above, in this transaction
            return delivery_from_row(row)

        return await self._c.write(job)


async def _run(tx: Tx, *, sql: str, params: Mapping[str, Any]) -> None:
    await tx.run(sql, params)


async def _changed_one(tx: Tx, *, sql: str, params: Mapping[str, Any]) -> bool:
    return await tx.changed(sql, params) == 1


async def _all(tx: Tx, *, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return await tx.all(sql, params)
