"""Template helpers: times, countdowns, labels. Pure functions of their arguments."""

from __future__ import annotations

import re
import time

from markupsafe import Markup, escape

from escalated.core.weblinks import escalation_path
from escalated.domain import wording
from escalated.domain.models import TERMINAL_STATUSES, Escalation

# The last share of an SLA in which the countdown is marked urgent.
URGENT_SHARE = 0.2


def utc(at_ms: int | None) -> str:
    if at_ms is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at_ms // 1000))


def when(at_ms: int | None) -> Markup:
    """A ``<time>`` the browser shows in the reader's own time zone (app.js);
    the UTC value stays in its title, and is the text when scripts are off."""
    if at_ms is None:
        return Markup("—")
    return Markup('<time datetime="{}" title="{}">{}</time>').format(iso(at_ms), utc(at_ms), utc(at_ms))


def iso(at_ms: int | None) -> str:
    return "" if at_ms is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at_ms // 1000))


def span(ms: int) -> str:
    """``42s``, ``5m``, ``3h 10m``, ``2d 4h``: two units at most."""
    seconds = max(0, ms // 1000)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m"
    return f"{secs}s"


def age(esc: Escalation, now_ms: int) -> str:
    return span(now_ms - esc.created_ms)


def sla(esc: Escalation, now_ms: int) -> str:
    """In words, so it reads without colour: ``due in 14m``, ``overdue by 2m``, ``no SLA``."""
    if esc.status in TERMINAL_STATUSES:
        return esc.status
    if esc.deadline_ms is None:
        return "no SLA"
    left = esc.deadline_ms - now_ms
    return f"due in {span(left)}" if left >= 0 else f"overdue by {span(-left)}"


def urgent(esc: Escalation, now_ms: int) -> bool:
    if esc.deadline_ms is None or esc.status in TERMINAL_STATUSES:
        return False
    total = max(1, esc.deadline_ms - esc.created_ms)
    return (esc.deadline_ms - now_ms) / total < URGENT_SHARE


def outcome(esc: Escalation, now_ms: int) -> str:
    """``in 3 h 54 min, Deny applies``: what happens if nobody answers."""
    default = wording.choice_label(esc.content.choices, esc.default_choice)
    return wording.timeout_outcome(deadline_ms=esc.deadline_ms, default_label=default, now_ms=now_ms)


def choice_label(esc: Escalation, choice_id: str | None) -> str | None:
    return wording.choice_label(esc.content.choices, choice_id)


def answers(esc: Escalation) -> list[tuple[str, str]]:
    """The decision's response as (field label, value label) pairs."""
    if esc.resolution is None:
        return []
    return wording.response_words(esc.content.response_fields, esc.resolution.response)


# http(s) links in agent text, up to the first space or closing bracket; a
# trailing full stop or comma belongs to the sentence, not the link.
_LINK = re.compile(r"https?://[^\s<>\"'()\[\]]+")


def linkify(text: str | None) -> Markup:
    """Agent text, escaped, with its plain http(s) links made clickable.

    Nothing else is interpreted (no markdown, no HTML): the links open in a
    new tab without the page as referrer, and the text keeps its line breaks
    through the stylesheet (white-space: pre-wrap)."""
    if not text:
        return Markup("")
    out: list[str] = []
    last = 0
    for match in _LINK.finditer(text):
        url = match.group(0).rstrip(".,;:!?")
        end = match.start() + len(url)
        out.append(str(escape(text[last:match.start()])))
        out.append(f'<a href="{escape(url)}" rel="noopener noreferrer nofollow" target="_blank">{escape(url)}</a>')
        last = end
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def number_attr(value: float | None) -> str:
    """An ``<input type=number>`` attribute: ``5`` rather than ``5.0``."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


FILTERS = {"when": when, "utc": utc, "iso": iso, "number_attr": number_attr, "linkify": linkify}
# escalation_path: the templates link to an escalation where the core does (core/weblinks.py).
GLOBALS = {
    "age": age,
    "sla": sla,
    "urgent": urgent,
    "outcome": outcome,
    "choice_label": choice_label,
    "answers": answers,
    "escalation_path": escalation_path,
}
