"""Identifiers: a type prefix plus a ULID (``esc_01JD…``).

ULIDs sort by creation time, so "newest first" and cursors need no extra
column. Within one millisecond the random part is incremented instead of
drawn anew (monotonic ULIDs), so ids made one after another always sort in
the order they were made.
"""

from __future__ import annotations

import os
import re
import threading
import time

_RANDOM_BITS = 80
_RANDOM_BYTES = _RANDOM_BITS // 8
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Every 10-bit value as its two base32 digits: 13 look-ups write the 26
# characters (130 bits, the top two always 0) of a 128-bit ULID, 5 for its
# millisecond (the first 10 characters), 8 for its random part (the other 16).
_PAIRS = [high + low for high in _CROCKFORD for low in _CROCKFORD]
_ULID_LIMIT = 1 << 128
_RANDOM_MASK = (1 << _RANDOM_BITS) - 1
_MS_LIMIT = 1 << (128 - _RANDOM_BITS)
# Random bytes are read from the OS a page at a time (one getrandom call per
# ~400 ids instead of one per id); a forked child drops what it inherited.
_POOL_BYTES = 4096
_lock = threading.Lock()
_last_ms = 0
_last_random = 0
_pool = b""
_pool_at = 0


def _drop_pool() -> None:
    global _pool, _pool_at
    _pool, _pool_at = b"", 0


os.register_at_fork(after_in_child=_drop_pool)


def _random80() -> int:  # under _lock
    global _pool, _pool_at
    if _pool_at + _RANDOM_BYTES > len(_pool):
        _pool, _pool_at = os.urandom(_POOL_BYTES), 0
    start, _pool_at = _pool_at, _pool_at + _RANDOM_BYTES
    return int.from_bytes(_pool[start:_pool_at], "big")


# An escalation's id, the only cursor a list page hands out (the last id of the page).
ESCALATION_ID = re.compile(r"esc_[0-9A-HJKMNP-TV-Z]{26}")


def new_id(prefix: str) -> str:
    global _last_ms, _last_random
    now_ms = time.time_ns() // 1_000_000
    with _lock:
        if now_ms <= _last_ms and _last_random + 1 < (1 << _RANDOM_BITS):
            now_ms, random = _last_ms, _last_random + 1
        else:
            random = _random80()
        _last_ms, _last_random = now_ms, random
    if now_ms >= _MS_LIMIT:
        raise OverflowError("a ULID's time is 48 bits")
    return f"{prefix}_{_ms_text(now_ms)}{_random_text(random)}"


def ulid_text(value: int) -> str:
    """A 128-bit ULID as its 26-character Crockford base32 text: the text
    ``str(ulid.ULID.from_int(value))`` writes, without building the object."""
    if not 0 <= value < _ULID_LIMIT:
        raise OverflowError("a ULID is an unsigned 128-bit integer")
    return _ms_text(value >> _RANDOM_BITS) + _random_text(value & _RANDOM_MASK)


_ms_texts: tuple[int, str] = (-1, "")  # the last millisecond written: ids made in one share it


def _ms_text(ms: int) -> str:
    """The first 10 characters: a 48-bit millisecond (50 bits, the top two 0)."""
    global _ms_texts
    kept = _ms_texts
    if kept[0] == ms:
        return kept[1]
    p = _PAIRS
    high = ms >> 20  # 28 bits; every part is a one-digit int, far cheaper to shift than the 128-bit value
    text = f"{p[high >> 20]}{p[(high >> 10) & 1023]}{p[high & 1023]}{p[(ms >> 10) & 1023]}{p[ms & 1023]}"
    _ms_texts = (ms, text)  # one assignment: a thread reads the old pair or the new, whole
    return text


def _random_text(random: int) -> str:
    """The other 16 characters: the 80-bit random part."""
    p = _PAIRS
    high, mid, low = random >> 50, (random >> 20) & 0x3FFFFFFF, random & 0xFFFFF  # 30, 30 and 20 bits
    return (
        f"{p[high >> 20]}{p[(high >> 10) & 1023]}{p[high & 1023]}{p[mid >> 20]}{p[(mid >> 10) & 1023]}"
        f"{p[mid & 1023]}{p[low >> 10]}{p[low & 1023]}"
    )
