"""The Slack messages escalated posts, as Block Kit JSON. The core speaks of
escalations, notifications and clicks; this is where they become Slack's.

- ``notification_body``: what a ``slack:WEBHOOK_URL`` target receives,
  rendered by the sender from the delivery's stored body (the escalation as
  its resource, and the settings of when it was queued): question, subject,
  evidence, deadline, and one button per choice when Slack can call us back
  (a signing secret is set) and no response field needs typing; otherwise a
  link to the web page. A body queued as Block Kit is sent as it is.
- ``click_reply``: what a click's ``response_url`` is posted: the message
  with its buttons replaced by who decided what (``replace_original``), or a
  reply only the clicker sees (refusals, "already decided").

Every piece of user text goes through ``escape`` (``&``, ``<``, ``>``), so an
agent's question cannot mention ``<!channel>`` or disguise a link. Button
labels are ``plain_text``, which Slack never formats, so they are cut to
Slack's length limit but not escaped.
"""

from __future__ import annotations

from typing import Any

import attrs
import orjson

from escalated.core.notifications import SLACK_SETTINGS
from escalated.core.slackdecide import ClickOutcome, Decided, Refused, TooLate
from escalated.core.weblinks import escalation_url
from escalated.domain import wording
from escalated.domain.convert import content_from_json
from escalated.domain.models import CANCELLED, Content, Escalation
from escalated.domain.slack import DECIDE_ACTION, button_value, escape
from escalated.timeutil import format_ms, parse_timestamp_ms

# Slack's limits (Block Kit reference): a section's text, a button's label,
# the notification fallback text. Longer text is cut with an ellipsis.
MAX_SECTION = 3000
MAX_BUTTON_LABEL = 75
MAX_FALLBACK = 3000


def fit(text: str, limit: int) -> str:
    """``escape(text)`` cut to ``limit`` characters without splitting an entity."""
    out: list[str] = []
    used = 0
    for char in text:
        piece = escape(char)
        if used + len(piece) > limit - 1:
            return "".join(out) + "…"
        out.append(piece)
        used += len(piece)
    return "".join(out)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@attrs.frozen
class Shown:
    """What a message shows of an escalation: taken from the escalation (a
    click's reply) or from the resource an outbox row keeps (a notification)."""

    id: str
    policy: str
    content: Content
    deadline_ms: int | None
    default_choice: str | None

    @classmethod
    def of(cls, esc: Escalation) -> Shown:
        return cls(esc.id, esc.policy, esc.content, esc.deadline_ms, esc.default_choice)

    @classmethod
    def from_resource(cls, resource: dict[str, Any]) -> Shown:
        content = content_from_json({name: resource[name] for name in ("subject", "question", "evidence", "choices", "responseFields")})
        deadline = resource["deadlineAt"]
        return cls(
            resource["id"], resource["policy"], content, None if deadline is None else parse_timestamp_ms(deadline), resource["defaultChoice"]
        )


def page_url(esc: Shown, *, base_url: str | None) -> str | None:
    return escalation_url(base_url, esc.id) if base_url else None


def _when(at_ms: int) -> str:
    """Slack shows a date token in each reader's time zone; the text after
    ``|`` is what clients that cannot are shown (RFC 3339, UTC)."""
    return f"<!date^{at_ms // 1000}^{{date_short_pretty}} at {{time}}|{format_ms(at_ms)}>"


def _content_blocks(esc: Shown) -> list[dict[str, Any]]:
    content = esc.content
    head = f"*{fit(content.subject.label, 500)}* · {fit(esc.policy, 200)}\n"
    blocks = [_section(head + fit(content.question, MAX_SECTION - len(head)))]
    if content.evidence:
        blocks.append(_section(_evidence(content.evidence)))
    if esc.deadline_ms is None:
        deadline = "No deadline: it waits until someone decides"
    else:
        default = wording.choice_label(content.choices, esc.default_choice)
        deadline = f"If nobody answers by {_when(esc.deadline_ms)}, *{escape(default or 'the default')}* applies"
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"{deadline} · escalation {esc.id}"}]})
    return blocks


def _evidence(evidence: tuple[str, ...]) -> str:
    lines: list[str] = []
    used = len("*Evidence*")
    for i, item in enumerate(evidence):
        line = "• " + fit(item, 600)
        if used + len(line) + 40 > MAX_SECTION:
            lines.append(f"… and {len(evidence) - i} more (see the web page)")
            break
        lines.append(line)
        used += len(line) + 1
    return "*Evidence*\n" + "\n".join(lines)


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _buttons(esc: Shown) -> dict[str, Any]:
    return {
        "type": "actions",
        "block_id": f"{DECIDE_ACTION}.{esc.id}",
        "elements": [
            {
                "type": "button",
                "action_id": f"{DECIDE_ACTION}.{choice.id}",
                "text": {"type": "plain_text", "text": _cut(choice.label, MAX_BUTTON_LABEL)},
                "value": button_value(esc.id, choice.id),
            }
            for choice in esc.content.choices
        ],
    }


def _link(esc: Shown, *, base_url: str | None, why: str) -> dict[str, Any]:
    url = page_url(esc, base_url=base_url)
    where = f"<{url}|Open it in escalated>" if url else f"Open escalation {esc.id} in escalated's web app"
    return _section(f"{why} {where}.")


def notification_body(stored: bytes) -> bytes:
    """The message to post for a ``slack:`` delivery whose stored body is
    ``stored``: the notification's body with its ``slack`` settings
    (core/notifications.py), rendered here; a body that has none was queued
    as Block Kit by an earlier version and is posted as it is. Raises
    ``ValueError`` for a body that is neither."""
    payload = orjson.loads(stored)
    settings = payload.get(SLACK_SETTINGS) if isinstance(payload, dict) else None
    if settings is None:
        return stored
    try:
        shown = Shown.from_resource(payload["escalation"])
        message = notification(shown, buttons=settings["buttons"], base_url=settings["baseUrl"])
    except (KeyError, TypeError, ValueError) as exc:  # cattrs' errors are ValueErrors too
        raise ValueError(f"not a notification body: {exc!r}") from exc
    if (lead := settings.get("lead")) is not None:
        message["text"] = f"{lead}: {message['text']}"
    return orjson.dumps(message)


def notification(esc: Shown, *, buttons: bool, base_url: str | None) -> dict[str, Any]:
    """The message a ``slack:`` target is posted about ``esc``."""
    blocks = _content_blocks(esc)
    if buttons and not esc.content.response_fields:
        blocks.append(_buttons(esc))
        if base_url:
            blocks.append(_link(esc, base_url=base_url, why="Or decide on the web page:"))
    elif esc.content.response_fields:
        blocks.append(_link(esc, base_url=base_url, why="This decision needs some input."))
    else:
        blocks.append(_link(esc, base_url=base_url, why="To decide:"))
    return {"text": fallback_text(esc), "blocks": blocks}


def fallback_text(esc: Shown) -> str:
    """Shown in notifications and by clients that cannot show blocks."""
    text = f"{esc.content.subject.label}: {esc.content.question}"
    return fit(text, MAX_FALLBACK)


def click_reply(outcome: ClickOutcome) -> dict[str, Any]:
    """What a click's ``response_url`` is posted (core/slackdecide.py says when each)."""
    if isinstance(outcome, Decided):
        return decided(outcome.escalation)
    if isinstance(outcome, TooLate):
        return ephemeral(f"Too late, nothing was changed: {outcome_line(outcome.escalation)}")
    assert isinstance(outcome, Refused)
    return ephemeral(escape(outcome.reason))


def decided(esc: Escalation) -> dict[str, Any]:
    """The original message with its buttons replaced by the outcome."""
    shown = Shown.of(esc)
    return {"replace_original": True, "text": fallback_text(shown), "blocks": [*_content_blocks(shown), _section(outcome_line(esc))]}


def outcome_line(esc: Escalation) -> str:
    """What happened to ``esc``, in a line (``mrkdwn``)."""
    if esc.status == CANCELLED and esc.cancellation is not None:
        who = fit(esc.cancellation.cancelled_by, 200)
        return f":no_entry_sign: Cancelled by *{who}* {_when(esc.cancellation.cancelled_at_ms)}."
    res = esc.resolution
    if res is None:
        return f"Still {esc.status}."
    labels = {c.id: c.label for c in esc.content.choices}
    choice = fit(labels.get(res.choice, res.choice), 200)
    if res.resolved_by == "timeout":
        return f":hourglass: Timed out {_when(res.answered_at_ms)}: the policy's default, *{choice}*, was applied."
    return f":white_check_mark: *{choice}*, decided by *{fit(res.answered_by, 200)}* {_when(res.answered_at_ms)}."


def ephemeral(text: str) -> dict[str, Any]:
    """A reply only the clicker sees; the message itself stays as it is."""
    return {"response_type": "ephemeral", "replace_original": False, "text": text}
