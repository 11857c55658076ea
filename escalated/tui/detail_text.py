"""The detail view's text, built from the escalation and its deliveries.

Plain Rich ``Text`` (never markup) because every string comes from an agent
and may contain brackets. No Textual here, so it is cheap to test.
"""

from __future__ import annotations

from rich.text import Text

from escalated.domain.wording import choice_label, response_words, timeout_outcome
from escalated.tui.format import local_time, ms

DELIVERY_STYLE = {"delivered": "green", "pending": "yellow", "failed": "bold red"}


def _heading(text: Text, title: str) -> None:
    text.append(f"\n{title}\n", style="bold underline")


def _pair(text: Text, key: str, value: object) -> None:
    text.append(f"  {key:<13}", style="dim")
    text.append(f"{value if value not in (None, '') else '—'}\n")


def summary(escalation: dict, now_ms: int) -> Text:
    """The question and evidence first, then what happens next, then the record."""
    text = Text()
    subject = escalation.get("subject") or {}
    text.append(f"{subject.get('label', '')}", style="bold")
    text.append(f"  [{escalation.get('status')}]\n", style="bold magenta")
    text.append(f"{escalation.get('question', '')}\n", style="bold")
    for item in escalation.get("evidence", []):
        text.append(f"  • {item}\n")
    _outcome(text, escalation, now_ms)
    _pair(text, "asked by", f"{escalation.get('agentId')}, {local_time(escalation.get('createdAt'))}")
    if escalation.get("assignee"):
        _pair(text, "assigned to", escalation["assignee"])
    if escalation.get("acknowledgedBy"):
        _pair(text, "picked up", f"{escalation['acknowledgedBy']}, {local_time(escalation.get('acknowledgedAt'))}")
    _pair(text, "policy", escalation.get("policy"))
    text.rstrip()
    return text


def _outcome(text: Text, escalation: dict, now_ms: int) -> None:
    choices = escalation.get("choices", [])
    if resolution := escalation.get("resolution"):
        label = choice_label(choices, resolution.get("choice"))
        if resolution.get("resolvedBy") == "timeout":
            how = "nobody answered in time"
        else:
            how = f"decided by {resolution.get('answeredBy')}"
        _pair(text, "decision", f"{label} — {how}, {local_time(resolution.get('answeredAt'))}")
        if rule := resolution.get("rule"):
            _pair(text, "remembered", f"a decision made in advance by {rule.get('createdBy')} ({rule.get('id')})")
        if resolution.get("reason"):
            _pair(text, "reason", resolution["reason"])
        for label, value in response_words(escalation.get("responseFields", []), resolution.get("response")):
            _pair(text, label, value)
    elif cancellation := escalation.get("cancellation"):
        _pair(text, "cancelled", f"by {cancellation.get('cancelledBy')}, {local_time(cancellation.get('cancelledAt'))}")
        _pair(text, "reason", cancellation.get("reason"))
    else:
        default = choice_label(choices, escalation.get("defaultChoice"))
        outcome = timeout_outcome(deadline_ms=ms(escalation.get("deadlineAt")), default_label=default, now_ms=now_ms)
        _pair(text, "no answer?", outcome)


def body(escalation: dict) -> Text:
    text = Text()
    _heading(text, "Choices")
    for choice in escalation.get("choices", []):
        text.append(f"  • {choice['label']}\n")
    if fields := escalation.get("responseFields"):
        _heading(text, "Response fields")
        for field in fields:
            text.append(f"  {field.get('label') or field['name']}", style="bold")
            text.append(f" ({_field_rule(field)})\n")
    _heading(text, "History")
    for entry in escalation.get("history", []):
        text.append(f"  {local_time(entry.get('at'))}  ", style="dim")
        text.append(f"{entry.get('event')} by {entry.get('by')}\n")
    _heading(text, "Technical details")
    subject = escalation.get("subject") or {}
    _pair(text, "subject", f"{subject.get('type')} {subject.get('id')}")
    _pair(text, "run", escalation.get("runId"))
    _pair(text, "id", escalation.get("id"))
    text.rstrip()
    return text


def _field_rule(field: dict) -> str:
    if field.get("type") == "select":
        return "one of " + ", ".join(o["label"] for o in field.get("options", []))
    bounds = [f"{k} {field[k]}" for k in ("min", "step") if field.get(k) is not None]
    return "number" + (f", {', '.join(bounds)}" if bounds else "")


def deliveries(escalation: dict, items: list[dict] | None) -> Text:
    text = Text()
    _heading(text, "Callback")
    resume = escalation.get("resume")
    if not resume:
        text.append("  no resume target: nothing is sent\n", style="dim")
        return text
    signed = "signed" if resume.get("signed") else "unsigned"
    text.append(f"  {resume.get('url')} ({signed})\n")
    callbacks = [d for d in items or [] if d.get("kind") == "callback"]
    if items is None:
        text.append("  delivery status unavailable\n", style="dim")
    elif not callbacks:
        text.append("  not sent yet: sent once the escalation is decided or times out\n", style="dim")
    for delivery in callbacks:
        _delivery_line(text, delivery)
    text.rstrip()
    return text


def _delivery_line(text: Text, delivery: dict) -> None:
    status = delivery.get("status", "?")
    attempts = delivery.get("attempts") or []
    text.append(f"  {status}", style=DELIVERY_STYLE.get(status, ""))
    text.append(f"  {delivery.get('event')}, {len(attempts)} attempt(s)")
    if attempts:
        last = attempts[-1]
        outcome = last.get("statusCode") or last.get("error") or "?"
        text.append(f", last {outcome}")
    if delivery.get("nextAttemptAt") and status == "pending":
        text.append(f", next at {delivery['nextAttemptAt']}")
    text.append("\n")
