"""The detail view's text, built from the escalation and its deliveries.

Plain Rich ``Text`` (never markup) because every string comes from an agent
and may contain brackets. No Textual here, so it is cheap to test.
"""

from __future__ import annotations

from rich.text import Text

from escalated.tui.format import countdown_text, ms

DELIVERY_STYLE = {"delivered": "green", "pending": "yellow", "failed": "bold red"}


def _heading(text: Text, title: str) -> None:
    text.append(f"\n{title}\n", style="bold underline")


def _pair(text: Text, key: str, value: object) -> None:
    text.append(f"  {key:<13}", style="dim")
    text.append(f"{value if value not in (None, '') else '—'}\n")


def summary(escalation: dict, now_ms: int) -> Text:
    text = Text()
    subject = escalation.get("subject") or {}
    text.append(f"{subject.get('label', '')}", style="bold")
    text.append(f"  [{escalation.get('status')}]\n", style="bold magenta")
    text.append(f"{escalation.get('question', '')}\n")
    _pair(text, "subject", f"{subject.get('type')} {subject.get('id')}")
    _pair(text, "policy", escalation.get("policy"))
    _pair(text, "agent / run", f"{escalation.get('agentId')} / {escalation.get('runId')}")
    _pair(text, "created", escalation.get("createdAt"))
    deadline = ms(escalation.get("deadlineAt"))
    left = "" if deadline is None or escalation.get("status") not in ("open", "acknowledged") else (
        f"  ({countdown_text(deadline, now_ms)})"
    )
    _pair(text, "deadline", (escalation.get("deadlineAt") or "no SLA") + left)
    if escalation.get("acknowledgedBy"):
        _pair(text, "acknowledged", f"{escalation['acknowledgedBy']} at {escalation.get('acknowledgedAt')}")
    _outcome(text, escalation)
    text.rstrip()
    return text


def _outcome(text: Text, escalation: dict) -> None:
    if resolution := escalation.get("resolution"):
        by = "timeout (policy default)" if resolution.get("resolvedBy") == "timeout" else resolution.get("answeredBy")
        _pair(text, "decision", f"{resolution.get('choice')} by {by} at {resolution.get('answeredAt')}")
        if resolution.get("reason"):
            _pair(text, "reason", resolution["reason"])
        if resolution.get("response") is not None:
            _pair(text, "response", ", ".join(f"{k}={v}" for k, v in resolution["response"].items()))
    if cancellation := escalation.get("cancellation"):
        _pair(text, "cancelled", f"by {cancellation.get('cancelledBy')} at {cancellation.get('cancelledAt')}")
        _pair(text, "reason", cancellation.get("reason"))


def body(escalation: dict) -> Text:
    text = Text()
    _heading(text, "Evidence")
    for item in escalation.get("evidence", []):
        text.append(f"  • {item}\n")
    _heading(text, "Choices")
    for choice in escalation.get("choices", []):
        text.append(f"  {choice['id']:<12}", style="bold")
        text.append(f"{choice['label']}\n")
    if fields := escalation.get("responseFields"):
        _heading(text, "Response fields")
        for field in fields:
            text.append(f"  {field['name']:<12}", style="bold")
            text.append(f"{field.get('label', '')} ({_field_rule(field)})\n")
    _heading(text, "History")
    for entry in escalation.get("history", []):
        text.append(f"  {entry.get('at')}  ", style="dim")
        text.append(f"{entry.get('event')} by {entry.get('by')}\n")
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
