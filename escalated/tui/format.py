"""How an escalation reads in the inbox: ages, SLA countdowns, urgency.

Pure functions of the escalation and ``now_ms`` (no Textual, no clock read):
the app injects its clock, so snapshots and tests are deterministic.
"""

from __future__ import annotations

import datetime

from escalated.domain.models import ACTIVE_STATUSES, CANCELLED, RESOLVED
from escalated.timeutil import parse_timestamp_ms

LIVE_STATUSES = ACTIVE_STATUSES

# Share of the SLA still left below which the countdown turns amber / red.
WARN_SHARE = 0.5
CRITICAL_SHARE = 0.2
# Whatever the SLA, the last minute is always critical.
CRITICAL_FLOOR_MS = 60_000


def ms(text: str | None) -> int | None:
    return None if not text else parse_timestamp_ms(text)


def age_text(created_ms: int, now_ms: int) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``: the one largest unit, always short."""
    seconds = max(0, (now_ms - created_ms) // 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def countdown_text(deadline_ms: int, now_ms: int) -> str:
    """``14:59`` under an hour, ``1h05m`` above, ``overdue`` once passed."""
    left_s = (deadline_ms - now_ms) // 1000
    if left_s < 0:
        return "overdue"
    if left_s >= 3600:
        return f"{left_s // 3600}h{left_s % 3600 // 60:02d}m"
    return f"{left_s // 60:02d}:{left_s % 60:02d}"


def urgency(escalation: dict, now_ms: int) -> str:
    """``none`` (no SLA or not live), ``ok``, ``warn``, ``critical`` or ``overdue``."""
    deadline = ms(escalation.get("deadlineAt"))
    if deadline is None or escalation.get("status") not in LIVE_STATUSES:
        return "none"
    left = deadline - now_ms
    if left < 0:
        return "overdue"
    total = max(1, deadline - (ms(escalation.get("createdAt")) or deadline))
    if left < CRITICAL_FLOOR_MS or left / total < CRITICAL_SHARE:
        return "critical"
    if left / total < WARN_SHARE:
        return "warn"
    return "ok"


def sla_text(escalation: dict, now_ms: int) -> str:
    status = escalation.get("status")
    if status == RESOLVED:
        resolution = escalation.get("resolution") or {}
        return "timeout" if resolution.get("resolvedBy") == "timeout" else "decided"
    if status == CANCELLED:
        return "cancel"
    deadline = ms(escalation.get("deadlineAt"))
    return "—" if deadline is None else countdown_text(deadline, now_ms)


def clip(text: str, width: int) -> str:
    """One line of at most ``width`` cells, with an ellipsis when cut."""
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: max(0, width - 1)] + "…"


def local_time(text: str | None) -> str:
    """A resource's UTC timestamp in the reviewer's own time zone, with the UTC
    value beside it when the two differ: ``2026-11-25 19:05 (18:05 UTC)``."""
    at = ms(text)
    if at is None:
        return "—"
    utc = datetime.datetime.fromtimestamp(at / 1000, tz=datetime.UTC)
    local = utc.astimezone()
    if local.utcoffset() == datetime.timedelta(0):
        return utc.strftime("%Y-%m-%d %H:%M UTC")
    return f"{local:%Y-%m-%d %H:%M} ({utc:%H:%M} UTC)"
