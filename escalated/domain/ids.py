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

_RANDOM_BITS = 80
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Every 10-bit value as its two base32 digits: 13 look-ups write the 26
# characters (130 bits, the top two always 0) of a 128-bit ULID.
_PAIRS = [high + low for high in _CROCKFORD for low in _CROCKFORD]
_PAIR_SHIFTS = tuple(range(120, -1, -10))
_ULID_LIMIT = 1 << 128
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
    return f"{prefix}_{ulid_text((now_ms << _RANDOM_BITS) | random)}"


def ulid_text(value: int) -> str:
    """A 128-bit ULID as its 26-character Crockford base32 text: the text
    ``str(ulid.ULID.from_int(value))`` writes, without building the object."""
    if not 0 <= value < _ULID_LIMIT:
        raise OverflowError("a ULID is an unsigned 128-bit integer")
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in _PAIR_SHIFTS])
