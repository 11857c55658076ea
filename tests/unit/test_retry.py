"""The retry schedule is a pure function of its arguments."""

from __future__ import annotations

import random

from escalated.engine.retry import next_attempt_ms, parse_retry_after

SCHEDULE = (5.0, 30.0, 120.0)


def _next(attempts_made: int, *, at_ms: int = 0, retry_after_s=None, retry_for_s=24 * 3600.0, seed=1):
    return next_attempt_ms(
        attempts_made=attempts_made,
        window_start_ms=0,
        at_ms=at_ms,
        schedule_s=SCHEDULE,
        retry_for_s=retry_for_s,
        retry_after_s=retry_after_s,
        rng=random.Random(seed),
    )


def test_waits_follow_the_schedule_within_twenty_percent_jitter():
    for attempts, wait_s in ((1, 5.0), (2, 30.0), (3, 120.0)):
        for seed in range(50):
            when = _next(attempts, seed=seed)
            assert wait_s * 800 <= when <= wait_s * 1200


def test_the_last_wait_repeats():
    assert 120_000 * 0.8 <= _next(9) <= 120_000 * 1.2


def test_jitter_spreads_retries():
    assert len({_next(1, seed=s) for s in range(20)}) > 10


def test_retry_after_is_a_floor_capped_at_an_hour():
    assert _next(1, retry_after_s=100) == 100_000
    assert _next(1, retry_after_s=10 * 3600) == 3600_000


def test_the_window_ends_retries():
    assert _next(1, at_ms=3600_000, retry_for_s=3600.0) is None
    assert _next(1, at_ms=0, retry_for_s=3600.0) is not None


def test_retry_after_parses_seconds_and_http_dates():
    assert parse_retry_after("7", now_s=0) == 7.0
    assert parse_retry_after("Thu, 01 Jan 1970 00:01:40 GMT", now_s=40) == 60.0
    assert parse_retry_after("soon", now_s=0) is None
    assert parse_retry_after(None, now_s=0) is None
