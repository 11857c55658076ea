"""The one NUL rule (escalated/domain/nul.py) the API, the CLI and the web admin share."""

from __future__ import annotations

from escalated.domain.nul import holds_nul, nul_fields


def test_a_text_holding_nul_anywhere_holds_nul():
    assert [holds_nul(t) for t in ("\x00", "a\x00b", "ab\x00", "ab", "")] == [True, True, True, False, False]


def test_nul_fields_names_each_text_holding_nul_in_the_order_given():
    assert nul_fields(user_name="bo\x00b", role="reviewer", key_name="k\x00") == ["user_name", "key_name"]


def test_a_tuple_or_list_is_named_when_one_of_its_texts_holds_nul():
    assert nul_fields(groups=("finance", "o\x00ps"), reviewers=["al\x00ice"], notify=("ok",)) == ["groups", "reviewers"]


def test_values_holding_no_text_are_left_to_the_callers_type_check():
    assert nul_fields(name=None, count=5, items=(1, None)) == []
