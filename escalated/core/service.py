"""The application core: every escalation operation, whoever calls it.

The HTTP routes, the web app, the SLA clock and the sender call these
methods; they validate with the domain, persist through the store (the only
place that talks to the database), and publish committed changes on the bus.
"Where is decide implemented?" — here. "Who wakes the sender?" —
``Service.wake_sender``, after every commit that queued a delivery.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from escalated.domain.convert import content_bytes, content_to_json
from escalated.domain.models import (
    ACKNOWLEDGED,
    ACTIVE_STATUSES,
    CANCELLED,
    EVENT_ACKNOWLEDGED,
    EVENT_BREACHED,
    EVENT_CANCELLED,
    EVENT_CREATED,
    EVENT_DECIDED,
    RESOLVED,
    Attempt,
    Cancellation,
    Delivery,
    Escalation,
    HistoryEntry,
    Policy,
    Principal,
    Resolution,
)
from escalated.domain.records import Change, IdempotencyRecord, ListQuery
from escalated.domain.scopes import DECIDE
from escalated.domain.validation import CreateRequest, decode_create, validate_cancel, validate_create, validate_decide
from escalated.core.bus import EventBus
from escalated.core.callbacks import callback_body, callback_delivery, cancelled_callback_body
from escalated.core.creation import (
    IDEMPOTENCY_WINDOW_MS,
    Created,
    Idempotency,
    Replayed,
    new_escalation,
    replayed,
    routes_for,
)
from escalated.core.inbox import INBOX_LIMIT, Inbox, InboxQuery, matches_text, sort_inbox
from escalated.core.notifications import notification_deliveries
from escalated.core.review import EscalationReview
from escalated.core.reviewerops import ReviewerOps, RuleDecisions
from escalated.domain.urlsafety import literal_problem
from escalated.errors import (
    DefaultChoiceNotOffered,
    EscalatedError,
    InsufficientScope,
    InvalidState,
    NotFound,
    UnknownPolicy,
    log_failure,
)
from escalated.core.metrics import Metrics
from escalated.core.settings import Settings, http_url
from escalated.store.base import Store

log = logging.getLogger(__name__)


class Service(EscalationReview, RuleDecisions):
    def __init__(
        self, store: Store, settings: Settings, *, bus: EventBus | None = None, metrics: Metrics | None = None
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = settings.clock  # epoch ms: every operation takes its time here
        self.bus = bus or EventBus()
        self.metrics = metrics or Metrics()
        self._sender_wakers: list[Callable[[], None]] = []
        self._retry_listeners: list[Callable[[Delivery], None]] = []
        # Where people open the web app, for links in Slack messages: --public-url,
        # else the address serve listens on (``listening_at`` once it is bound).
        self.web_url = settings.public_url or http_url(settings.host, settings.port)
        self.reviewer_ops = ReviewerOps(self)  # claims and remembered decisions (core/reviewerops.py)

    def listening_at(self, url: str) -> None:
        """The address ``serve`` bound (with ``--port 0`` known only then)."""
        if not self.settings.public_url:
            self.web_url = url.rstrip("/")

    # -- the sender ---------------------------------------------------------

    def on_deliveries(self, wake: Callable[[], None]) -> None:
        """Register the sender's wake-up; ``wake_sender`` calls it."""
        self._sender_wakers.append(wake)

    def on_retry_by_hand(self, listener: Callable[[Delivery], None]) -> None:
        """Register who hears of a delivery retried by hand (the sender lets
        it through a receiver's pause: someone believes the receiver works)."""
        self._retry_listeners.append(listener)

    def wake_sender(self) -> None:
        """After a commit that queued deliveries: start them now, not at the
        sender's next idle wake-up. Every such commit ends here."""
        for wake in self._sender_wakers:
            wake()

    # -- the bus ------------------------------------------------------------

    def _publish(self, event: str, esc: Escalation, at_ms: int, *, deliveries: int = 0) -> None:
        """After a commit. When several processes share the store, the store's
        change feed publishes every commit, ours included, in commit order
        with the database's event numbers (``on_change``): not here too."""
        if not self.store.shared:
            self.bus.publish(event, esc, at_ms, deliveries=deliveries)

    def on_change(self, change: Change) -> None:
        """A commit seen by the store's change feed (any process's)."""
        self.bus.publish(f"escalation.{change.event}", change.escalation, change.at_ms, deliveries=1, seq=change.seq)
        self.wake_sender()

    # -- create -------------------------------------------------------------

    def valid_create(self, raw: bytes) -> CreateRequest | None:
        """The create a JSON body holds when it is valid and has no response
        fields (``decode_create``); None otherwise, and ``create`` validates it."""
        return decode_create(raw, check_url=self._callback_url_problem)

    async def create(
        self,
        principal: Principal,
        body: dict[str, Any] | None,
        *,
        idempotency: Idempotency | None = None,
        valid: CreateRequest | None = None,
    ) -> Created | Replayed:
        """``valid``: the body as ``valid_create`` read it, not validated again;
        ``body`` is then needed only with an ``idempotency`` key (its record
        keeps the body's hash)."""
        at_ms = self.clock()
        body_sha = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest() if idempotency else ""
        not_before_ms = at_ms - IDEMPOTENCY_WINDOW_MS
        if idempotency:
            replay = await self.store.find_replay(
                workspace_id=principal.workspace_id, key=idempotency.key, not_before_ms=not_before_ms
            )
            if replay is not None:
                return replayed(replay, body_sha)
        if valid is not None:
            request = valid
        else:
            assert body is not None, "a create needs its body or the request valid_create read from it"
            request = validate_create(body, check_url=self._callback_url_problem)
        # Kept by the store: no read and no wait (a policy it does not keep is read).
        policy = self.store.kept_policy(workspace_id=principal.workspace_id, key=request.policy) or await self.policy(
            principal.workspace_id, request.policy
        )
        if policy.sla_s is not None and policy.default_choice not in {c.id for c in request.content.choices}:
            raise DefaultChoiceNotOffered(
                f"policy {policy.key} times out to {policy.default_choice!r}, which is not among the choices",
                errors=[{"field": "choices", "message": f"must include the policy's default choice {policy.default_choice!r}"}],
            )
        esc = new_escalation(principal, request, policy, at_ms=at_ms)
        answer, idem = None, None
        if idempotency:  # remembered with the escalation, in its transaction
            answer = idempotency.answer(esc)
            idem = IdempotencyRecord(principal.workspace_id, idempotency.key, body_sha, answer.status, answer.body)
        notices = (
            notification_deliveries(
                esc,
                policy.notify,
                at_ms=at_ms,
                content_json=content_to_json(esc.content),
                slack_buttons=self.settings.slack_signing_secret is not None,
                base_url=self.web_url,
            )
            if policy.notify
            else []
        )
        replay = await self.store.create_escalation(
            escalation=esc,
            routes=routes_for(policy),
            notifications=notices,
            idempotency=idem,
            not_before_ms=not_before_ms,
            content_json=content_bytes(esc.content),
        )
        if replay is not None:  # lost a race with an identical retry
            return replayed(replay, body_sha)
        self._publish(EVENT_CREATED, esc, at_ms, deliveries=len(notices))
        if notices:
            self.wake_sender()
        self.metrics.escalation_created()
        # Answered "open" as always (the escalation as created); a matching
        # remembered decision resolves it now (CONTRACT §15). The escalation
        # is committed whatever happens to that decision: a failed one is the
        # SLA clock's leader's to make again (``ReviewerOps.answer_missed``),
        # not an error that would send the agent to create it twice.
        try:
            answering = self.reviewer_ops.answer_new(esc, policy)
            if answering is not None:
                await answering
        except Exception as exc:
            log_failure(log, "the remembered decision for %s failed after its create; the SLA clock will make it", exc, esc.id)
        return Created(esc, answer)

    def _callback_url_problem(self, url: str) -> str | None:
        return literal_problem(url, self.settings.callback_rules)

    async def policy(self, workspace_id: str, key: str) -> Policy:
        policy = await self.store.policy(workspace_id=workspace_id, key=key)
        if policy is None:
            raise UnknownPolicy(
                f"no policy {key!r} in this workspace (create it with: escalated policy set {key})",
                errors=[{"field": "policy", "message": "unknown policy"}],
            )
        return policy

    # -- reads --------------------------------------------------------------

    async def get(self, principal: Principal, escalation_id: str) -> Escalation:
        esc = await self.store.get_escalation(
            escalation_id=escalation_id, workspace_id=principal.workspace_id, routes=principal.routes
        )
        if esc is None:
            raise NotFound(f"no escalation {escalation_id}")
        return esc

    async def escalation_for_integration(self, escalation_id: str) -> Escalation | None:
        """Any workspace's escalation, unscoped: for an integration (Slack,
        email links) that authenticated its caller itself and checks who may
        act on it with ``may_decide`` once it knows the user. Never answer its
        content to a caller from this alone."""
        return await self.store.get_escalation(escalation_id=escalation_id, workspace_id=None, routes=None)

    async def list_escalations(self, query: ListQuery) -> tuple[list[Escalation], str | None]:
        return await self.store.list_escalations(query=query)

    async def inbox(self, principal: Principal, query: InboxQuery) -> Inbox:
        """The web inbox: routed escalations filtered and sorted, with counts per status."""
        statuses = ACTIVE_STATUSES if query.status == "active" else (None,) if query.status == "all" else (query.status,)
        items: list[Escalation] = []
        for status in statuses:
            page, _ = await self.store.list_escalations(
                query=ListQuery(
                    workspace_id=principal.workspace_id,
                    routes=principal.routes,
                    status=status,
                    policy=query.policy or None,
                    assignee=principal.actor if query.mine else None,
                    limit=INBOX_LIMIT,
                )
            )
            items += page
        items = [e for e in items if matches_text(e, query.text)]
        counts = await self.store.count_by_status(workspace_id=principal.workspace_id, routes=principal.routes)
        return Inbox(items=tuple(sort_inbox(items, query.sort)), counts=counts, query=query)

    async def can_see(self, principal: Principal, escalation: Escalation) -> bool:
        """Whether the principal may see this escalation (its workspace, its routes)."""
        if escalation.workspace_id != principal.workspace_id:
            return False
        if principal.routes is None:
            return True
        found = await self.store.get_escalation(
            escalation_id=escalation.id, workspace_id=principal.workspace_id, routes=principal.routes
        )
        return found is not None

    async def may_decide(self, principal: Principal, escalation: Escalation) -> bool:
        """It holds ``escalations:decide`` and the escalation is routed to it:
        the rule ``decide`` enforces, asked first by email links and Slack."""
        return DECIDE in principal.scopes and await self.can_see(principal, escalation)

    async def due_deadlines(self, *, after_ms: int | None, until_ms: int, limit: int) -> list[tuple[int, str]]:
        """(deadline_ms, id) of live escalations due in (after, until], oldest first (the SLA clock)."""
        return await self.store.deadlines_between(after_ms=after_ms, until_ms=until_ms, limit=limit)

    # -- transitions --------------------------------------------------------

    async def acknowledge(self, principal: Principal, esc: Escalation) -> Escalation:
        _require_active(esc)
        at_ms = self.clock()
        changed = await self.store.acknowledge(escalation_id=esc.id, by=principal.actor, at_ms=at_ms)
        if not changed:
            return await self.get(principal, esc.id)
        esc = msgspec.structs.replace(
            esc,
            status=ACKNOWLEDGED,
            acknowledged_by=principal.actor,
            acknowledged_ms=at_ms,
            history=(*esc.history, HistoryEntry(event="acknowledged", by=principal.actor, at_ms=at_ms)),
        )
        self._publish(EVENT_ACKNOWLEDGED, esc, at_ms)
        return esc

    async def decide(self, principal: Principal, esc: Escalation, body: dict[str, Any]) -> Escalation:
        if not await self.may_decide(principal, esc):
            raise _not_decidable_by(principal, esc)
        _require_active(esc)
        request = validate_decide(body, esc)
        at_ms = self.clock()
        resolution = Resolution(
            choice=request.choice,
            resolved_by="human",
            answered_by=principal.actor,
            answered_at_ms=at_ms,
            reason=request.reason,
            response=request.response,
        )
        if esc.review.needs_quorum(resolution.choice):
            return await self._approve(principal, esc, resolution)
        history_event = EVENT_DECIDED.removeprefix("escalation.")
        callback = self._callback(esc, resolution, EVENT_DECIDED)
        await self.store.resolve(escalation_id=esc.id, resolution=resolution, history_event=history_event, callback=callback)
        return self._resolved(esc, resolution, EVENT_DECIDED)

    async def breach_many(self, escalation_ids: list[str], *, at_ms: int) -> list[Escalation]:
        """The SLA path, in the given (deadline) order, in one write group.

        An escalation a decision already took is skipped: the compare-and-set
        in the store decides, so each resolves exactly once.
        """
        order = {eid: i for i, eid in enumerate(escalation_ids)}
        found = await self.store.get_escalations(escalation_ids=escalation_ids)
        live = sorted((e for e in found if e.status in ACTIVE_STATUSES and e.default_choice), key=lambda e: order[e.id])
        items = []
        for esc in live:
            assert esc.default_choice is not None  # live has only escalations with one
            resolution = Resolution(
                choice=esc.default_choice, resolved_by="timeout", answered_by="system", answered_at_ms=at_ms
            )
            items.append((esc, resolution))
        done = set(
            await self.store.resolve_many(
                items=[(e.id, r, "breached", self._callback(e, r, EVENT_BREACHED)) for e, r in items]
            )
        )
        return [self._resolved(e, r, EVENT_BREACHED) for e, r in items if e.id in done]

    def _callback(self, esc: Escalation, resolution: Resolution, event: str) -> Delivery | None:
        return callback_delivery(esc, event=event, body=callback_body(esc, resolution), at_ms=resolution.answered_at_ms)

    async def _cancel_callback(self, esc: Escalation, cancellation: Cancellation) -> Delivery | None:
        """Only when the escalation's policy asks for it (read now: a CLI change applies at once)."""
        try:
            wanted = (await self.policy(esc.workspace_id, esc.policy)).cancel_callback
        except UnknownPolicy:  # deleted since: its setting went with it
            wanted = False
        if not wanted:
            return None
        body = cancelled_callback_body(esc, cancellation)
        return callback_delivery(esc, event=EVENT_CANCELLED, body=body, at_ms=cancellation.cancelled_at_ms)

    def _resolved(self, esc: Escalation, resolution: Resolution, event: str) -> Escalation:
        """After the commit: the new state, published to the bus."""
        entry = HistoryEntry(event=event.removeprefix("escalation."), by=resolution.answered_by, at_ms=resolution.answered_at_ms)
        esc = msgspec.structs.replace(esc, status=RESOLVED, resolution=resolution, history=(*esc.history, entry))
        self._publish(event, esc, resolution.answered_at_ms, deliveries=int(esc.resume is not None))
        if esc.resume is not None:
            self.wake_sender()
        self.metrics.escalations_resolved.labels(resolution.resolved_by).inc()
        return esc

    async def cancel(self, principal: Principal, esc: Escalation, body: dict[str, Any]) -> Escalation:
        _require_active(esc)
        reason = validate_cancel(body)
        at_ms = self.clock()
        cancellation = Cancellation(cancelled_by=principal.actor, cancelled_at_ms=at_ms, reason=reason)
        callback = await self._cancel_callback(esc, cancellation)
        await self.store.cancel(escalation_id=esc.id, cancellation=cancellation, callback=callback)
        esc = msgspec.structs.replace(
            esc,
            status=CANCELLED,
            cancellation=cancellation,
            history=(*esc.history, HistoryEntry(event="cancelled", by=principal.actor, at_ms=at_ms)),
        )
        self._publish(EVENT_CANCELLED, esc, at_ms, deliveries=int(callback is not None))
        if callback is not None:
            self.wake_sender()
        return esc

    # -- deliveries ---------------------------------------------------------

    async def deliveries(self, principal: Principal, escalation_id: str) -> tuple[Escalation, list[Delivery]]:
        """An escalation the principal may see, with its callback and notifications."""
        esc = await self.get(principal, escalation_id)
        return esc, await self.store.deliveries_of(escalation_id=esc.id)

    async def count_pending_deliveries(self) -> int:
        """Deliveries waiting for an attempt, the outbox's backlog (for /metrics)."""
        return await self.store.count_pending_deliveries()

    async def retry_delivery(self, principal: Principal, escalation_id: str) -> Delivery:
        """Queue the escalation's callback again, failed or delivered (same id, same
        bytes, CONTRACT §5), and wake the sender."""
        esc = await self.get(principal, escalation_id)
        delivery = await self.store.requeue_callback(escalation_id=esc.id, at_ms=self.clock())
        for listener in self._retry_listeners:
            listener(delivery)
        self.wake_sender()
        return delivery

    async def pending_deliveries(self, *, limit: int, exclude: set[str]) -> list[Delivery]:
        """Pending deliveries in due order, skipping ``exclude`` (the sender's in-flight ones)."""
        return await self.store.pending_deliveries(limit=limit, exclude=exclude)

    async def claim_deliveries(self, deliveries: list[Delivery], *, at_ms: int, lease_ms: int) -> dict[str, int | None]:
        """Those this process may attempt now, each with its fencing token
        (None where one process is the only sender)."""
        if not deliveries:
            return {}
        return await self.store.claim_deliveries(delivery_ids=[d.id for d in deliveries], at_ms=at_ms, lease_ms=lease_ms)

    async def defer_deliveries(self, deliveries: list[Delivery], *, until_ms: int) -> None:
        """Not before ``until_ms``: a paused receiver's deliveries leave the outbox's head."""
        if deliveries:
            await self.store.defer_deliveries(delivery_ids=[d.id for d in deliveries], until_ms=until_ms)

    async def record_attempt(
        self, delivery: Delivery, *, attempt: Attempt, status: str, next_attempt_ms: int | None, token: int | None = None
    ) -> None:
        await self.store.record_attempt(
            delivery_id=delivery.id, attempt=attempt, status=status, next_attempt_ms=next_attempt_ms, token=token
        )


def _not_decidable_by(principal: Principal, esc: Escalation) -> EscalatedError:
    """As the API answers (403 before 404). Each surface refuses first, in its
    own words: this is the backstop for a caller that did not."""
    if DECIDE not in principal.scopes:
        return InsufficientScope(f"deciding needs the scope {DECIDE}", scope=DECIDE)
    return NotFound(f"no escalation {esc.id}")


def _require_active(esc: Escalation) -> None:
    if esc.status not in ACTIVE_STATUSES:
        raise InvalidState(f"escalation {esc.id} is {esc.status}", current_status=esc.status)

