"""Time as plain integers (epoch milliseconds) and its two text forms.

Timestamps on the wire are RFC 3339 UTC with milliseconds and ``Z``.
Durations accept ``90s``, ``15m``, ``4h``, ``2d`` and ISO 8601 (``PT15M``).
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from datetime import datetime

from escalated.errors import ConfigError

_SIMPLE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_ISO = re.compile(
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)
MAX_DURATION_S = 100 * 365 * 86400.0
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# The server's one clock: epoch ms, read where an operation takes its time.
# ``now_ms`` (the wall clock) in ``serve``; a test passes one it moves
# (Settings.clock), so no test waits real time for a deadline or an expiry.
Clock = Callable[[], int]


# ".000Z" to ".999Z": an int's format spec costs more than the rest of format_ms.
_MILLIS_Z = [f".{millis:03d}Z" for millis in range(1000)]


def format_ms(at_ms: int) -> str:
    seconds, millis = divmod(at_ms, 1000)
    return _format_second(seconds) + _MILLIS_Z[millis]


@functools.lru_cache(maxsize=1024)
def _format_second(seconds: int) -> str:
    # Every resource carries a few timestamps, mostly of a few seconds (a
    # create's createdAt and history, its deadline): formatting each second
    # once saves the gmtime + strftime (themselves several times cheaper
    # than datetime). A cache of many seconds, not only the last one, so that
    # alternating between createdAt and deadlineAt still hits.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def format_opt(at_ms: int | None) -> str | None:
    return None if at_ms is None else format_ms(at_ms)


def parse_timestamp_ms(text: str) -> int:
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return round(dt.timestamp() * 1000)  # int() truncated x.335 s to 334 ms


def parse_duration_s(text: str) -> float:
    """``15m`` → 900.0. Raises ConfigError with the accepted forms on failure."""
    raw = str(text).strip()
    m = _SIMPLE.match(raw)
    if m:
        value = float(m.group(1)) * _UNIT_S[m.group(2)]
    else:
        iso = _ISO.match(raw.upper())
        if not iso or raw.upper() in ("P", "PT") or raw.upper().endswith("T"):
            raise ConfigError(f"invalid duration {text!r}: use 90s, 15m, 4h, 2d or ISO 8601 like PT15M")
        parts = {k: float(v) for k, v in iso.groupdict().items() if v}
        value = parts.get("d", 0) * 86400 + parts.get("h", 0) * 3600 + parts.get("m", 0) * 60 + parts.get("s", 0)
    if value <= 0:
        raise ConfigError(f"invalid duration {text!r}: must be positive")
    if value > MAX_DURATION_S:
        # Beyond this, deadlines and expiries leave the range timestamps can be written in.
        raise ConfigError(f"invalid duration {text!r}: must be at most 100 years")
    return value


def format_duration_s(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    # Not :g, whose exponent form (1e+06s) parse_duration_s would refuse.
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
