"""The character check of callback URLs: its ASCII fast path says what the
Unicode categories say (tests/security drive the refusals through serve)."""

from __future__ import annotations

import unicodedata

from escalated.domain.urlsafety import unsendable

UNSENDABLE_CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp"}


def test_every_ascii_character_is_judged_by_its_category():
    for code in range(128):
        char = chr(code)
        assert unsendable(f"http://example.test/a{char}b") == (unicodedata.category(char) in UNSENDABLE_CATEGORIES), code


def test_non_ascii_urls_are_judged_by_category_too():
    assert unsendable("http://example.test/\u2028")  # line separator
    assert unsendable("http://example.test/\u200b")  # zero width space (a format character)
    assert unsendable("http://example.test/\u00a0")  # no-break space
    assert not unsendable("http://exämple.test/ü")
