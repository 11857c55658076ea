"""Timestamps (RFC 3339 UTC, milliseconds, Z) and durations (90s, 15m, 4h, 2d, PT15M)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from escalated.errors import ConfigError
from escalated.timeutil import format_duration_s, format_ms, format_opt, parse_duration_s, parse_timestamp_ms


def test_format_ms_is_rfc3339_utc_with_milliseconds_and_z():
    assert format_ms(1_795_342_500_123) == "2026-11-22T10:15:00.123Z"


def test_format_ms_pads_milliseconds():
    assert format_ms(1_795_342_500_007) == "2026-11-22T10:15:00.007Z"
    assert format_ms(0) == "1970-01-01T00:00:00.000Z"


def test_format_opt_passes_none_through():
    assert format_opt(None) is None


@given(st.integers(min_value=0, max_value=4_102_444_800_000))
def test_parse_timestamp_inverts_format(at_ms):
    assert parse_timestamp_ms(format_ms(at_ms)) == at_ms


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("15m", 900), ("4h", 14400), ("2d", 172800), ("500ms", 0.5), ("1.5h", 5400),
     ("PT15M", 900), ("pt15m", 900), ("PT1H30M", 5400), ("P1D", 86400), ("P1DT2H", 93600), ("PT0.5S", 0.5), (" 15m ", 900)],
)  # fmt: skip
def test_parse_duration_accepts_short_and_iso_forms(text, seconds):
    assert parse_duration_s(text) == seconds


@pytest.mark.parametrize("text", ["", "15", "m", "15 minutes", "-5m", "PT", "P", "P1DT", "PT15X", "1w", "15m30s"])
def test_parse_duration_refuses_other_text_with_the_accepted_forms(text):
    with pytest.raises(ConfigError, match="15m"):
        parse_duration_s(text)


@pytest.mark.parametrize("text", ["36501d", "99999999999d", "P99999999D"])
def test_parse_duration_refuses_more_than_100_years(text):
    with pytest.raises(ConfigError, match="100 years"):
        parse_duration_s(text)


def test_parse_duration_accepts_100_years():
    assert parse_duration_s("36500d") == 36500 * 86400


@pytest.mark.parametrize("text", ["0s", "0m", "PT0S"])
def test_parse_duration_refuses_zero(text):
    with pytest.raises(ConfigError, match="positive"):
        parse_duration_s(text)


@pytest.mark.parametrize(("seconds", "text"), [(90, "90s"), (900, "15m"), (3600, "1h"), (7200, "2h"), (172800, "2d"), (5400, "90m"), (0.5, "0.5s")])
def test_format_duration_picks_the_largest_whole_unit(seconds, text):
    assert format_duration_s(seconds) == text


@given(st.integers(min_value=1, max_value=10**9))
def test_format_duration_round_trips_whole_seconds(seconds):
    assert parse_duration_s(format_duration_s(seconds)) == seconds


@given(st.integers(min_value=1, max_value=10**9))
def test_format_duration_round_trips_milliseconds(ms):
    assert parse_duration_s(format_duration_s(ms / 1000)) == pytest.approx(ms / 1000)
