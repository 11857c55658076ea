"""Reviewer operations (CONTRACT §15), as part of ``Service``: quorum votes
on the decide path, and the reminders and levels the SLA clock asks for.

The rules come from ``domain/review.py``; the store writes each change with
a compare-and-set (``Store.approve``, ``Store.nudge_many``), so a decision,
a breach and a nudge racing on one escalation each take effect once.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from escalated.core.notifications import notification_deliveries
from escalated.core.serviceparts import ServiceParts
from escalated.domain.convert import content_to_json
from escalated.domain.models import (
    EVENT_APPROVED,
    EVENT_DECIDED,
    EVENT_ESCALATED,
    EVENT_REMINDED,
    OPEN,
    Approval,
    Delivery,
    Escalation,
    HistoryEntry,
    Principal,
    Resolution,
)
from escalated.domain.review import Due, Nudge, due, routes_of
from escalated.errors import UserTokenRequired

NUDGE_BATCH = 200  # escalations per write job; each owes a few notifications at most
SYSTEM = "system"


class EscalationReview(ServiceParts):
    """Mixed into ``Service``: uses its ``store``, ``_callback``, ``_resolved``,
    ``_publish``, ``wake_sender`` and settings."""

    # -- quorum ---------------------------------------------------------------

    async def _approve(self, principal: Principal, esc: Escalation, resolution: Resolution) -> Escalation:
        """A decision for a quorum choice: a vote, which resolves the
        escalation when it is the quorum-th of distinct users."""
        if principal.kind != "user":
            raise UserTokenRequired(
                f"{resolution.choice!r} needs {esc.review.quorum} approvals by distinct users, "
                "and an API key never counts toward a quorum: decide as a user (a user token or the web app)"
            )
        approval = Approval(by=principal.actor, choice=resolution.choice, at_ms=resolution.answered_at_ms)
        approvals = await self.store.approve(
            escalation_id=esc.id,
            approval=approval,
            quorum=esc.review.quorum,
            resolution=resolution,
            callback=self._callback(esc, resolution, EVENT_DECIDED),
        )
        # As of this vote's commit (a later read could show a later vote's ending as ours).
        esc = msgspec.structs.replace(esc, approvals=approvals)
        if sum(a.choice == approval.choice for a in approvals) >= esc.review.quorum:
            return self._resolved(esc, resolution, EVENT_DECIDED)
        entry = HistoryEntry(event="approved", by=approval.by, at_ms=approval.at_ms)
        esc = msgspec.structs.replace(esc, history=(*esc.history, entry))
        self._publish(EVENT_APPROVED, esc, approval.at_ms)
        return esc

    # -- reminders and levels (the SLA clock) -----------------------------------

    async def next_nudge_ms(self) -> int | None:
        """When the earliest open escalation is next owed a reminder or a level."""
        return await self.store.next_nudge()

    async def nudge_due(self, at_ms: int) -> int:
        """Every reminder and level due by ``at_ms``, in write jobs of
        ``NUDGE_BATCH``. Returns how many escalations were nudged."""
        total = 0
        while ids := await self.store.nudges_until(until_ms=at_ms, limit=NUDGE_BATCH):
            found = await self.store.get_escalations(escalation_ids=ids)
            nudges = [await self._nudge(esc, at_ms) for esc in found if esc.status == OPEN and esc.nudge_ms is not None]
            done = set(await self.store.nudge_many(items=[n for n, _ in nudges]))
            for nudge, esc in nudges:
                if nudge.escalation_id in done:
                    for entry in nudge.history:
                        self._publish(EVENT_ESCALATED, esc, entry.at_ms, deliveries=len(nudge.notifications))
            if any(n.notifications for n, _ in nudges):
                self.wake_sender()
            total += len(done)
            if len(ids) < NUDGE_BATCH or not done:
                break
        return total

    async def _nudge(self, esc: Escalation, at_ms: int) -> tuple[Nudge, Escalation]:
        """What ``esc`` owes at ``at_ms``, and the escalation as it is once written."""
        assert esc.nudge_ms is not None  # nudge_due passes only escalations owed a nudge
        rules = esc.review
        owed = due(rules, created_ms=esc.created_ms, level=esc.level, remind_ms=esc.remind_ms, at_ms=at_ms)
        history = tuple(HistoryEntry(event="escalated", by=SYSTEM, at_ms=at_ms, level=n) for n in owed.levels)
        after = msgspec.structs.replace(
            esc,
            level=owed.levels[-1] if owed.levels else esc.level,
            remind_ms=owed.remind_ms,
            nudge_ms=owed.nudge_ms,
            history=(*esc.history, *history),
        )
        policy = await self.store.policy(workspace_id=esc.workspace_id, key=esc.policy)
        notices = self._nudge_notices(after, owed, policy_notify=policy.notify if policy is not None else (), at_ms=at_ms)
        nudge = Nudge(
            escalation_id=esc.id,
            expected_ms=esc.nudge_ms,
            level=after.level,
            remind_ms=owed.remind_ms,
            nudge_ms=owed.nudge_ms,
            routes=routes_of(tuple(r for n in owed.levels for r in rules.levels[n - 1].reviewers)),
            history=history,
            notifications=tuple(notices),
        )
        return nudge, after

    def _nudge_notices(self, esc: Escalation, owed: Due, *, policy_notify: tuple[str, ...], at_ms: int) -> list[Delivery]:
        """Each level reached notifies its own targets, or the policy's; a
        reminder goes to the policy's and the reached levels', less whoever a
        level just told. ``policy_notify`` is read now, like cancel_callback."""
        rules = esc.review
        notices: list[Delivery] = []
        told: set[str] = set()
        for n in owed.levels:
            targets = [t for t in (rules.levels[n - 1].notify or policy_notify) if t not in told]
            notices += self._notices(esc, targets, at_ms=at_ms, event=EVENT_ESCALATED, lead=f"Escalated (level {n})")
            told.update(targets)
        if owed.remind:
            everyone = [*policy_notify, *(t for level in rules.levels[: esc.level] for t in level.notify)]
            targets = [t for t in dict.fromkeys(everyone) if t not in told]
            notices += self._notices(esc, targets, at_ms=at_ms, event=EVENT_REMINDED, lead="Reminder")
        return notices

    def _notices(self, esc: Escalation, targets: Sequence[str], *, at_ms: int, event: str, lead: str) -> list[Delivery]:
        return notification_deliveries(
            esc,
            targets,
            at_ms=at_ms,
            content_json=content_to_json(esc.content),
            slack_buttons=self.settings.slack_signing_secret is not None,
            base_url=self.web_url,
            event=event,
            lead=lead,
        )
