"""Reviewer notifications (CONTRACT §4): what is owed when an escalation is created.

Targets: ``webhook:URL`` (POST of ``{"event", "text", "escalation"}``; ``text``
makes it Slack-compatible, so the agent's words in it are escaped as for
``slack:``: a question cannot ping ``<!channel>`` or disguise a link), ``slack:WEBHOOK_URL`` (a Block Kit message,
core/slackmessages.py), ``email:ADDRESS`` (SMTP), ``desktop``
(``notify-send``). The body is stored in the outbox like a callback's, so a
Slack message is rendered once, at creation, with the settings of then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from escalated.core import slackmessages
from escalated.domain.models import EVENT_CREATED, NOTIFICATION, Delivery, Escalation
from escalated.domain.resource import escalation_resource
from escalated.domain.slack import escape
from escalated.domain.ids import new_id

SLACK_PREFIX = "slack:"


def escalation_text(esc: Escalation) -> str:
    """One line a human can act on, for Slack, email subjects and desktop pop-ups."""
    choices = " / ".join(c.label for c in esc.content.choices)
    return f"[{esc.policy}] {esc.content.subject.label}: {esc.content.question} ({choices}) — {esc.id}"


def notification_deliveries(
    esc: Escalation,
    targets: Sequence[str],
    *,
    at_ms: int,
    content_json: dict[str, Any],
    slack_buttons: bool = False,
    base_url: str | None = None,
    event: str = EVENT_CREATED,
    lead: str | None = None,
) -> list[Delivery]:
    """``slack_buttons``: Slack can call the server back (a signing secret is
    set), so ``slack:`` messages carry one button per choice. ``event`` and
    ``lead`` (a few words before the text): a reminder or a level reached
    (CONTRACT §15) rather than the creation."""
    if not targets:
        return []
    text = escalation_text(esc) if lead is None else f"{lead}: {escalation_text(esc)}"
    body = orjson.dumps(
        {
            "event": event,
            "text": escape(text),  # Slack mrkdwn; the desktop pop-up unescapes it
            "escalation": escalation_resource(esc, content_json=content_json),
        }
    )
    return [
        Delivery(
            id=new_id("dlv"),
            escalation_id=esc.id,
            kind=NOTIFICATION,
            target=target,
            event=event,
            body=_slack_body(esc, slack_buttons=slack_buttons, base_url=base_url, lead=lead)
            if target.startswith(SLACK_PREFIX)
            else body,
            next_attempt_ms=at_ms,
            created_ms=at_ms,
        )
        for target in targets
    ]


def _slack_body(esc: Escalation, *, slack_buttons: bool, base_url: str | None, lead: str | None) -> bytes:
    message = slackmessages.notification(esc, buttons=slack_buttons, base_url=base_url)
    if lead is not None:
        message["text"] = f"{lead}: {message['text']}"
    return orjson.dumps(message)
