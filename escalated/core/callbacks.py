"""What an agent is called back with: the bodies (serialised once; every
attempt sends these bytes) and the outbox row that carries them."""

from __future__ import annotations

from typing import Any

import orjson

from escalated.domain.models import CALLBACK, Cancellation, Delivery, Escalation, Resolution
from escalated.domain.ids import new_id
from escalated.timeutil import format_ms


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
    body: dict[str, Any] = {
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


def callback_delivery(esc: Escalation, *, event: str, body: bytes, at_ms: int) -> Delivery | None:
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
