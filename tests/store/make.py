"""Domain objects for the store conformance suite, built by hand: the
store is tested below the service, so nothing here validates them."""

from __future__ import annotations

from escalated.domain.ids import new_id
from escalated.domain.models import (
    CALLBACK,
    OPEN,
    Choice,
    Content,
    Delivery,
    Escalation,
    Resolution,
    Subject,
)
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.store.base import Store

WINDOW_MS = 24 * 3600 * 1000
CONTENT = Content(
    subject=Subject(type="refund", id="r1", label="Refund"),
    question="Approve?",
    evidence=("order 1",),
    choices=(Choice(id="approve", label="Approve"), Choice(id="deny", label="Deny")),
)


def escalation(ws: str, *, at_ms: int = 1_000, run_id: str = "run", status: str = OPEN, **fields) -> Escalation:
    return Escalation(
        id=new_id("esc"), workspace_id=ws, status=status, policy="refunds.large", agent_id="agent", run_id=run_id,
        content=CONTENT, created_ms=at_ms, created_by="key_1", deadline_ms=at_ms + 60_000, default_choice="deny",
        **fields,
    )  # fmt: skip


async def create(
    store: Store,
    esc: Escalation,
    *,
    routes: tuple[str, ...] = ("*",),
    notifications: list[Delivery] | None = None,
    idempotency: IdempotencyRecord | None = None,
) -> Replay | None:
    return await store.create_escalation(
        escalation=esc, routes=routes, notifications=notifications or [], idempotency=idempotency,
        not_before_ms=esc.created_ms - WINDOW_MS, content_json=None,
    )  # fmt: skip


def delivery(esc: Escalation, event: str, *, kind: str = CALLBACK, due_ms: int = 0, at_ms: int = 0) -> Delivery:
    return Delivery(
        id=new_id("dlv"), escalation_id=esc.id, kind=kind, target="http://127.0.0.1:9/cb", event=event,
        body=b'{"event": "%s"}' % event.encode(), next_attempt_ms=due_ms, created_ms=at_ms,
    )  # fmt: skip


def human(choice: str = "approve", *, by: str = "user:ann", at_ms: int = 2_000) -> Resolution:
    return Resolution(choice=choice, resolved_by="human", answered_by=by, answered_at_ms=at_ms)


def timeout(at_ms: int = 61_000) -> Resolution:
    return Resolution(choice="deny", resolved_by="timeout", answered_by="system:sla", answered_at_ms=at_ms)
