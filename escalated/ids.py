"""Identifiers: a type prefix plus a ULID (``esc_01JD…``).

ULIDs sort by creation time, so "newest first" and cursors need no extra
column. Within one millisecond the random part is incremented instead of
drawn anew (monotonic ULIDs), so ids made one after another always sort in
the order they were made.
"""

from __future__ import annotations

import secrets
import threading
import time

from ulid import ULID

_RANDOM_BITS = 80
_lock = threading.Lock()
_last_ms = 0
_last_random = 0


def new_id(prefix: str) -> str:
    global _last_ms, _last_random
    now_ms = time.time_ns() // 1_000_000
    with _lock:
        if now_ms <= _last_ms and _last_random + 1 < (1 << _RANDOM_BITS):
            now_ms, random = _last_ms, _last_random + 1
        else:
            random = secrets.randbits(_RANDOM_BITS)
        _last_ms, _last_random = now_ms, random
    return f"{prefix}_{ULID.from_int((now_ms << _RANDOM_BITS) | random)}"
