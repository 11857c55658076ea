"""When to try a failed delivery again. Pure: time and randomness are arguments."""

from __future__ import annotations

import random
from email.utils import parsedate_to_datetime

JITTER = 0.2
MAX_RETRY_AFTER_S = 3600.0


def next_attempt_ms(
    *,
    attempts_made: int,
    window_start_ms: int,
    at_ms: int,
    schedule_s: tuple[float, ...],
    retry_for_s: float,
    retry_after_s: float | None = None,
    rng: random.Random | None = None,
) -> int | None:
    """The time of the next attempt, or None when the retry window is spent.

    The n-th wait is ``schedule_s[n-1]`` (the last one repeats), within ±20%
    jitter so many failed callbacks do not retry in lockstep; a receiver's
    ``Retry-After`` (capped at an hour) is a floor.
    """
    wait_s = schedule_s[min(attempts_made, len(schedule_s)) - 1]
    wait_s *= 1 + (rng or random).uniform(-JITTER, JITTER)
    if retry_after_s is not None:
        wait_s = max(wait_s, min(retry_after_s, MAX_RETRY_AFTER_S))
    when = at_ms + int(wait_s * 1000)
    if when > window_start_ms + int(retry_for_s * 1000):
        return None
    return when


def parse_retry_after(value: str | None, *, now_s: float) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now_s)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
