"""Identifiers: a type prefix plus a ULID (``esc_01JD…``).

ULIDs sort by creation time, so "newest first" and cursors need no extra
column.
"""

from __future__ import annotations

from ulid import ULID


def new_id(prefix: str) -> str:
    return f"{prefix}_{ULID()}"
