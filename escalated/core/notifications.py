"""Reviewer notifications (CONTRACT §4): what is owed when an escalation is created.

Targets: ``webhook:URL`` (POST of ``{"event", "text", "escalation"}``; ``text``
makes it Slack-compatible), ``email:ADDRESS`` (SMTP), ``desktop``
(``notify-send``). The body is stored in the outbox like a callback's.
"""

from __future__ import annotations

import orjson

from escalated.domain.models import EVENT_CREATED, NOTIFICATION, Delivery, Escalation
from escalated.domain.resource import escalation_resource
from escalated.ids import new_id


def escalation_text(esc: Escalation) -> str:
    """One line a human can act on, for Slack, email subjects and desktop pop-ups."""
    choices = " / ".join(c.label for c in esc.content.choices)
    return f"[{esc.policy}] {esc.content.subject.label}: {esc.content.question} ({choices}) — {esc.id}"


def notification_deliveries(esc: Escalation, targets, *, at_ms: int, content_json: dict) -> list[Delivery]:
    if not targets:
        return []
    body = orjson.dumps(
        {
            "event": EVENT_CREATED,
            "text": escalation_text(esc),
            "escalation": escalation_resource(esc, content_json=content_json),
        }
    )
    return [
        Delivery(
            id=new_id("dlv"),
            escalation_id=esc.id,
            kind=NOTIFICATION,
            target=target,
            event=EVENT_CREATED,
            body=body,
            next_attempt_ms=at_ms,
            created_ms=at_ms,
        )
        for target in targets
    ]
