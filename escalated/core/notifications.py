"""Reviewer notifications (CONTRACT §4): what is owed when an escalation is created.

Targets: ``webhook:URL`` (POST of ``{"event", "text", "escalation"}``; ``text``
makes it Slack-compatible, so the agent's words in it are escaped as for
``slack:``: a question cannot ping ``<!channel>`` or disguise a link), ``slack:WEBHOOK_URL`` (a Block Kit message), ``email:ADDRESS`` (SMTP),
``desktop`` (``notify-send``). The body is stored in the outbox like a
callback's: the event, the line of text and the escalation as its resource,
the same for every channel, which the sender renders for its channel
(engine/mail.py, engine/slackmessages.py). A ``slack:`` delivery's body also
keeps the Slack settings of when it was queued (``SLACK_SETTINGS``), so its
message is the one of then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from escalated.domain.models import EVENT_CREATED, NOTIFICATION, Delivery, Escalation
from escalated.domain.resource import escalation_resource
from escalated.domain.slack import escape
from escalated.domain.ids import new_id

SLACK_PREFIX = "slack:"
# The body's member for a slack: delivery: {"buttons": one per choice (Slack
# can call back), "baseUrl": the web app's public URL or null, "lead": the
# words before the text (a reminder, a level) or null}.
SLACK_SETTINGS = "slack"


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
    payload = {
        "event": event,
        "text": escape(text),  # Slack mrkdwn; the desktop pop-up unescapes it
        "escalation": escalation_resource(esc, content_json=content_json),
    }
    body = orjson.dumps(payload)
    slack_body = body
    if any(target.startswith(SLACK_PREFIX) for target in targets):
        slack_body = orjson.dumps({**payload, SLACK_SETTINGS: {"buttons": slack_buttons, "baseUrl": base_url, "lead": lead}})
    return [
        Delivery(
            id=new_id("dlv"),
            escalation_id=esc.id,
            kind=NOTIFICATION,
            target=target,
            event=event,
            body=slack_body if target.startswith(SLACK_PREFIX) else body,
            next_attempt_ms=at_ms,
            created_ms=at_ms,
        )
        for target in targets
    ]

