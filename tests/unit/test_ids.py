import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ulid import ULID

from escalated.domain.ids import new_id, ulid_text


def test_ids_made_one_after_another_sort_in_that_order():
    ids = [new_id("esc") for _ in range(5000)]  # many share a millisecond
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ids_carry_their_prefix_and_a_ulid():
    value = new_id("dlv")
    assert value.startswith("dlv_") and len(value) == 4 + 26


@settings(max_examples=2000)
@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_ulid_text_is_the_text_python_ulid_writes(value):
    assert ulid_text(value) == str(ULID.from_int(value))


@pytest.mark.parametrize("value", [0, 1, 31, 32, 1023, 1024, (1 << 80) - 1, 1 << 80, (1 << 125) - 1, 1 << 125, (1 << 128) - 1])
def test_ulid_text_at_the_digit_boundaries(value):
    assert ulid_text(value) == str(ULID.from_int(value))


def test_ids_carry_the_millisecond_they_were_made_in():
    before_ms = time.time_ns() // 1_000_000
    made_ms = ULID.from_str(new_id("esc")[4:]).milliseconds
    assert before_ms <= made_ms <= time.time_ns() // 1_000_000


@pytest.mark.parametrize("value", [-1, 1 << 128])
def test_ulid_text_refuses_what_is_not_128_bits(value):
    with pytest.raises(OverflowError):
        ulid_text(value)
