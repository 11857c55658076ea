"""The NUL character (U+0000): refused in every text escalated stores; and
control characters, refused in names.

PostgreSQL text cannot hold it (psycopg refuses to send it: a 500), so it is
refused before the store, alike on either backend, by one rule: the API as a
422 field error (``validation``, ``core/keyrequests``), the CLI and the web
admin forms in words (``core/admin.refuse_nul``).
"""

from __future__ import annotations

import re

NUL_MESSAGE = "must not contain the NUL character (U+0000)"


def holds_nul(text: str) -> bool:
    return "\x00" in text


def nul_fields(**texts: object) -> list[str]:
    """The names of the given texts that hold NUL, in the order given.

    A value is a text or a tuple or list of texts; anything else (None, a
    number) holds no text and is left to the caller's own type check.
    """
    return [name for name, value in texts.items() if _any_holds_nul(value)]


def _any_holds_nul(value: object) -> bool:
    if isinstance(value, str):
        return holds_nul(value)
    return isinstance(value, (tuple, list)) and any(isinstance(v, str) and holds_nul(v) for v in value)


# Names (users, groups, keys, workspaces) are listed a line per entry,
# tab-separated: a control character (a tab, a newline, C0 or C1) would split
# the line. Anything else, NBSP and emoji included, is a name's own business.
CONTROL_CHARACTERS = r"\x00-\x1f\x7f-\x9f"  # for a [character class], here and in /openapi.json
CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")


def holds_control(text: str) -> bool:
    return CONTROL.search(text) is not None
