"""The application core: every escalation operation, whoever calls it.

The HTTP routes and the SLA clock call these methods; they validate with the
domain, persist through the store's single writer, and publish committed
changes on the bus. "Where is decide implemented?" — here.
"""

from __future__ import annotations

import functools
import hashlib
import logging

import attrs
import orjson

from escalated.domain.convert import content_to_json
from escalated.domain.models import (
    ACTIVE_STATUSES,
    CALLBACK,
    EVENT_ACKNOWLEDGED,
    EVENT_BREACHED,
    EVENT_CANCELLED,
    EVENT_CREATED,
    EVENT_DECIDED,
    OPEN,
    Cancellation,
    Delivery,
    Escalation,
    HistoryEntry,
    Policy,
    Principal,
    Resolution,
    STATUSES,
)
from escalated.domain.resource import escalation_resource
from escalated.domain.validation import validate_cancel, validate_create, validate_decide
from escalated.core.bus import EventBus
from escalated.core.notifications import notification_deliveries
from escalated.domain.urlsafety import literal_problem
from escalated.errors import (
    DefaultChoiceNotOffered,
    IdempotencyKeyReused,
    InvalidState,
    NotFound,
    UnknownPolicy,
)
from escalated.ids import new_id
from escalated.metrics import Metrics
from escalated.settings import Settings
from escalated.store import escalations as store
from escalated.store import outbox
from escalated.store.admin import SELECT_POLICY, policy_from_row
from escalated.store.db import Database
from escalated.timeutil import format_ms, now_ms

log = logging.getLogger(__name__)
IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000
# The policy row is read on every create (a CLI change must apply to the very
# next one); parsing it is cached by the row's exact contents.
_cached_policy = functools.lru_cache(maxsize=4096)(policy_from_row)


INBOX_LIMIT = 200
INBOX_STATUSES = ("active", *STATUSES, "all")
INBOX_SORTS = ("deadline", "newest", "oldest")


@attrs.frozen
class InboxQuery:
    status: str = "active"  # one of INBOX_STATUSES
    policy: str = ""
    text: str = ""
    sort: str = "deadline"  # one of INBOX_SORTS


@attrs.frozen
class Inbox:
    items: tuple[Escalation, ...]
    counts: dict[str, int]  # per status, of everything routed to the caller
    query: InboxQuery


def matches_text(esc: Escalation, text: str) -> bool:
    """Free-text filter: every word appears in the id, policy, agent, subject or question."""
    if not text.strip():
        return True
    subject = esc.content.subject
    hay = " ".join((esc.id, esc.policy, esc.agent_id, esc.run_id, subject.label, subject.id, esc.content.question)).lower()
    return all(word in hay for word in text.lower().split())


def sort_inbox(items: list[Escalation], sort: str) -> list[Escalation]:
    if sort == "deadline":  # soonest first; no deadline last, newest first among those
        return sorted(items, key=lambda e: (e.deadline_ms is None, e.deadline_ms or 0, -e.created_ms))
    return sorted(items, key=lambda e: e.id, reverse=sort != "oldest")


@attrs.frozen
class Created:
    status: int
    body: bytes
    replayed: bool
    escalation_id: str


def routes_for(policy: Policy) -> tuple[str, ...]:
    if not policy.reviewers:
        return ("*",)
    return tuple(r if r.startswith("group:") else f"user:{r}" for r in policy.reviewers)


def cancelled_callback_body(esc: Escalation, cancellation: Cancellation) -> bytes:
    """The escalation.cancelled callback: exactly these fields (CONTRACT §5)."""
    return orjson.dumps(
        {
            "escalationId": esc.id,
            "runId": esc.run_id,
            "agentId": esc.agent_id,
            "policy": esc.policy,
            "reason": cancellation.reason,
            "cancelledBy": cancellation.cancelled_by,
            "cancelledAt": format_ms(cancellation.cancelled_at_ms),
        }
    )


def callback_body(esc: Escalation, resolution: Resolution) -> bytes:
    """The callback JSON, serialised once; every attempt sends these bytes."""
    body = {
        "escalationId": esc.id,
        "runId": esc.run_id,
        "agentId": esc.agent_id,
        "policy": esc.policy,
        "choice": resolution.choice,
    }
    if esc.content.response_fields:
        body["response"] = resolution.response
    body["resolvedBy"] = resolution.resolved_by
    body["answeredBy"] = resolution.answered_by
    body["answeredAt"] = format_ms(resolution.answered_at_ms)
    return orjson.dumps(body)


class Service:
    def __init__(
        self, db: Database, settings: Settings, *, bus: EventBus | None = None, metrics: Metrics | None = None
    ) -> None:
        self.db = db
        self.settings = settings
        self.bus = bus or EventBus()
        self.metrics = metrics or Metrics()

    # -- create -------------------------------------------------------------

    async def create(self, principal: Principal, body: dict, *, idempotency_key: str | None = None) -> Created:
        at_ms = now_ms()
        body_sha = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest() if idempotency_key else ""
        if idempotency_key:
            replay = await store.find_replay(self.db, principal.workspace_id, idempotency_key, at_ms - IDEMPOTENCY_WINDOW_MS)
            if replay is not None:
                return self._replayed(replay, body_sha)
        request = validate_create(body, check_url=self._callback_url_problem)
        policy = self.policy(principal.workspace_id, request.policy)
        if policy.sla_s is not None and policy.default_choice not in {c.id for c in request.content.choices}:
            raise DefaultChoiceNotOffered(
                f"policy {policy.key} times out to {policy.default_choice!r}, which is not among the choices",
                errors=[{"field": "choices", "message": f"must include the policy's default choice {policy.default_choice!r}"}],
            )
        esc = Escalation(
            id=new_id("esc"),
            workspace_id=principal.workspace_id,
            status=OPEN,
            policy=policy.key,
            agent_id=request.agent_id,
            run_id=request.run_id,
            content=request.content,
            created_ms=at_ms,
            created_by=principal.actor,
            resume=request.resume,
            deadline_ms=at_ms + int(policy.sla_s * 1000) if policy.sla_s is not None else None,
            default_choice=policy.default_choice,
            history=(HistoryEntry(event="created", by=principal.actor, at_ms=at_ms),),
        )
        content_json = content_to_json(esc.content)
        response = orjson.dumps(escalation_resource(esc, content_json=content_json))
        idem = (
            store.IdempotencyRecord(principal.workspace_id, idempotency_key, body_sha, 201, response)
            if idempotency_key
            else None
        )
        notices = notification_deliveries(esc, policy.notify, at_ms=at_ms, content_json=content_json)
        replay = await self.db.write(
            store.create_escalation, esc, routes_for(policy), notices, idem, at_ms - IDEMPOTENCY_WINDOW_MS, content_json
        )
        if replay is not None:  # lost a race with an identical retry
            return self._replayed(replay, body_sha)
        self.bus.publish(EVENT_CREATED, esc, at_ms, deliveries=len(notices))
        self.metrics.escalations_created.inc()
        return Created(status=201, body=response, replayed=False, escalation_id=esc.id)

    def _replayed(self, replay: store.Replay, body_sha: str) -> Created:
        if replay.body_sha256 != body_sha:
            raise IdempotencyKeyReused("this Idempotency-Key was used with a different body")
        esc_id = orjson.loads(replay.response_json)["id"]
        return Created(status=replay.status, body=replay.response_json, replayed=True, escalation_id=esc_id)

    def _callback_url_problem(self, url: str) -> str | None:
        return literal_problem(url, self.settings.allow_callback_hosts)

    def policy(self, workspace_id: str, key: str) -> Policy:
        row = self.db.lookup(SELECT_POLICY, (workspace_id, key))
        if row is None:
            raise UnknownPolicy(
                f"no policy {key!r} in this workspace (create it with: escalated policy set {key})",
                errors=[{"field": "policy", "message": "unknown policy"}],
            )
        return _cached_policy(row)

    # -- reads --------------------------------------------------------------

    async def get(self, principal: Principal, escalation_id: str) -> Escalation:
        esc = await store.get_escalation(
            self.db, escalation_id, workspace_id=principal.workspace_id, routes=principal.routes
        )
        if esc is None:
            raise NotFound(f"no escalation {escalation_id}")
        return esc

    async def list(self, query: store.ListQuery) -> tuple[list[Escalation], str | None]:
        return await store.list_escalations(self.db, query)

    async def inbox(self, principal: Principal, query: InboxQuery) -> Inbox:
        """The web inbox: routed escalations filtered and sorted, with counts per status."""
        statuses = ACTIVE_STATUSES if query.status == "active" else (None,) if query.status == "all" else (query.status,)
        items: list[Escalation] = []
        for status in statuses:
            page, _ = await store.list_escalations(
                self.db,
                store.ListQuery(
                    workspace_id=principal.workspace_id,
                    routes=principal.routes,
                    status=status,
                    policy=query.policy or None,
                    limit=INBOX_LIMIT,
                ),
            )
            items += page
        items = [e for e in items if matches_text(e, query.text)]
        counts = await store.count_by_status(self.db, principal.workspace_id, principal.routes)
        return Inbox(items=tuple(sort_inbox(items, query.sort)), counts=counts, query=query)

    async def deliveries(self, principal: Principal, escalation_id: str) -> tuple[Escalation, list[Delivery]]:
        """An escalation the principal may see, with its callback and notifications."""
        esc = await self.get(principal, escalation_id)
        return esc, await outbox.of_escalation(self.db, esc.id)

    async def redeliver(self, principal: Principal, escalation_id: str) -> Delivery:
        """Queue a failed (or delivered) callback again: same id, same bytes (CONTRACT §5)."""
        esc = await self.get(principal, escalation_id)
        return await self.db.write(outbox.requeue_callback, esc.id, now_ms())

    async def can_see(self, principal: Principal, esc: Escalation) -> bool:
        """Whether a bus event about ``esc`` may go to this principal (workspace and routing)."""
        if esc.workspace_id != principal.workspace_id:
            return False
        if principal.routes is None:
            return True
        found = await store.get_escalation(self.db, esc.id, workspace_id=principal.workspace_id, routes=principal.routes)
        return found is not None

    # -- transitions --------------------------------------------------------

    async def acknowledge(self, principal: Principal, esc: Escalation) -> Escalation:
        _require_active(esc)
        at_ms = now_ms()
        changed = await self.db.write(store.acknowledge, esc.id, principal.actor, at_ms)
        if not changed:
            return await self.get(principal, esc.id)
        esc = attrs.evolve(
            esc,
            status="acknowledged",
            acknowledged_by=principal.actor,
            acknowledged_ms=at_ms,
            history=(*esc.history, HistoryEntry(event="acknowledged", by=principal.actor, at_ms=at_ms)),
        )
        self.bus.publish(EVENT_ACKNOWLEDGED, esc, at_ms)
        return esc

    async def decide(self, principal: Principal, esc: Escalation, body: dict) -> Escalation:
        _require_active(esc)
        request = validate_decide(body, esc)
        at_ms = now_ms()
        resolution = Resolution(
            choice=request.choice,
            resolved_by="human",
            answered_by=principal.actor,
            answered_at_ms=at_ms,
            reason=request.reason,
            response=request.response,
        )
        return await self._resolve(esc, resolution, EVENT_DECIDED)

    async def breach_many(self, escalation_ids: list[str], *, at_ms: int) -> list[Escalation]:
        """The SLA path, in the given (deadline) order, in one write group.

        An escalation a decision already took is skipped: the compare-and-set
        in the store decides, so each resolves exactly once.
        """
        order = {eid: i for i, eid in enumerate(escalation_ids)}
        live = sorted(
            (e for e in await store.get_many(self.db, escalation_ids) if e.status in ACTIVE_STATUSES and e.default_choice),
            key=lambda e: order[e.id],
        )
        items = []
        for esc in live:
            resolution = Resolution(
                choice=esc.default_choice, resolved_by="timeout", answered_by="system", answered_at_ms=at_ms
            )
            items.append((esc, resolution))
        done = set(
            await self.db.write(
                store.resolve_many,
                [(e.id, r, "breached", self._callback(e, r, EVENT_BREACHED)) for e, r in items],
            )
        )
        return [self._resolved(e, r, EVENT_BREACHED) for e, r in items if e.id in done]

    def _callback(self, esc: Escalation, resolution: Resolution, event: str) -> Delivery | None:
        return _callback_delivery(esc, event=event, body=callback_body(esc, resolution), at_ms=resolution.answered_at_ms)

    def _cancel_callback(self, esc: Escalation, cancellation: Cancellation) -> Delivery | None:
        """Only when the escalation's policy asks for it (read now: a CLI change applies at once)."""
        try:
            wanted = self.policy(esc.workspace_id, esc.policy).cancel_callback
        except UnknownPolicy:  # deleted since: its setting went with it
            wanted = False
        if not wanted:
            return None
        body = cancelled_callback_body(esc, cancellation)
        return _callback_delivery(esc, event=EVENT_CANCELLED, body=body, at_ms=cancellation.cancelled_at_ms)

    async def _resolve(self, esc: Escalation, resolution: Resolution, event: str) -> Escalation:
        history_event = event.removeprefix("escalation.")
        await self.db.write(store.resolve, esc.id, resolution, history_event, self._callback(esc, resolution, event))
        return self._resolved(esc, resolution, event)

    def _resolved(self, esc: Escalation, resolution: Resolution, event: str) -> Escalation:
        """After the commit: the new state, published to the bus."""
        entry = HistoryEntry(event=event.removeprefix("escalation."), by=resolution.answered_by, at_ms=resolution.answered_at_ms)
        esc = attrs.evolve(esc, status="resolved", resolution=resolution, history=(*esc.history, entry))
        self.bus.publish(event, esc, resolution.answered_at_ms, deliveries=int(esc.resume is not None))
        self.metrics.escalations_resolved.labels(resolution.resolved_by).inc()
        return esc

    async def cancel(self, principal: Principal, esc: Escalation, body: dict) -> Escalation:
        _require_active(esc)
        reason = validate_cancel(body)
        at_ms = now_ms()
        cancellation = Cancellation(cancelled_by=principal.actor, cancelled_at_ms=at_ms, reason=reason)
        callback = self._cancel_callback(esc, cancellation)
        await self.db.write(store.cancel, esc.id, cancellation, callback)
        esc = attrs.evolve(
            esc,
            status="cancelled",
            cancellation=cancellation,
            history=(*esc.history, HistoryEntry(event="cancelled", by=principal.actor, at_ms=at_ms)),
        )
        self.bus.publish(EVENT_CANCELLED, esc, at_ms, deliveries=int(callback is not None))
        return esc


def _callback_delivery(esc: Escalation, *, event: str, body: bytes, at_ms: int) -> Delivery | None:
    if esc.resume is None:
        return None
    return Delivery(
        id=new_id("dlv"),
        escalation_id=esc.id,
        kind=CALLBACK,
        target=esc.resume.url,
        event=event,
        body=body,
        secret=esc.resume.secret,
        next_attempt_ms=at_ms,
        created_ms=at_ms,
    )


def _require_active(esc: Escalation) -> None:
    if esc.status not in ACTIVE_STATUSES:
        raise InvalidState(f"escalation {esc.id} is {esc.status}", current_status=esc.status)

