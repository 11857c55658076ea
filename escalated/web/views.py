"""Template helpers: times, countdowns, labels. Pure functions of their arguments."""

from __future__ import annotations

import time

from escalated.core.weblinks import escalation_path
from escalated.domain.models import Escalation

# The last share of an SLA in which the countdown is marked urgent.
URGENT_SHARE = 0.2


def when(at_ms: int | None) -> str:
    if at_ms is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at_ms // 1000))


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
    if esc.status in ("resolved", "cancelled"):
        return esc.status
    if esc.deadline_ms is None:
        return "no SLA"
    left = esc.deadline_ms - now_ms
    return f"due in {span(left)}" if left >= 0 else f"overdue by {span(-left)}"


def urgent(esc: Escalation, now_ms: int) -> bool:
    if esc.deadline_ms is None or esc.status in ("resolved", "cancelled"):
        return False
    total = max(1, esc.deadline_ms - esc.created_ms)
    return (esc.deadline_ms - now_ms) / total < URGENT_SHARE


def number_attr(value: float | None) -> str:
    """An ``<input type=number>`` attribute: ``5`` rather than ``5.0``."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


FILTERS = {"when": when, "iso": iso, "number_attr": number_attr}
# escalation_path: the templates link to an escalation where the core does (core/weblinks.py).
GLOBALS = {"age": age, "sla": sla, "urgent": urgent, "escalation_path": escalation_path}
