"""The receivers' circuit breaker, with time as an argument."""

from __future__ import annotations

from escalated.engine.breaker import PROBE_LOOK_MS, Breakers

R = "http://127.0.0.1:9001"
OTHER = "http://127.0.0.1:9002"


def failing(breakers: Breakers, times: int, *, at_ms: int = 0) -> None:
    for _ in range(times):
        breakers.record(R, ok=False, at_ms=at_ms)


def test_five_failures_in_a_row_pause_the_receiver_and_no_other():
    breakers = Breakers(failures_to_open=5, failing_for_ms=0, first_pause_ms=1000)
    failing(breakers, 4)
    assert breakers.may_start(R, 0)
    change = breakers.record(R, ok=False, at_ms=10)
    assert change is not None and change.paused and change.until_ms == 1010 and change.failures == 5
    assert not breakers.may_start(R, 500) and breakers.may_start(OTHER, 500)
    assert breakers.not_before_ms(R, 500) == 1010
    assert breakers.paused() == {R: 1010}


def test_a_success_between_failures_starts_the_count_again():
    breakers = Breakers(failures_to_open=5, failing_for_ms=0)
    failing(breakers, 4)
    assert breakers.record(R, ok=True, at_ms=0) is None
    failing(breakers, 4)
    assert breakers.may_start(R, 0)


def test_after_the_pause_one_probe_goes_and_a_failed_probe_doubles_the_pause_up_to_the_cap():
    breakers = Breakers(failures_to_open=5, failing_for_ms=0, first_pause_ms=1000, max_pause_ms=3000)
    failing(breakers, 5)
    assert breakers.may_start(R, 1000) and breakers.probing(R)
    assert not breakers.may_start(R, 1000)  # one probe at a time
    assert breakers.not_before_ms(R, 1000) == 1000 + PROBE_LOOK_MS
    assert breakers.record(R, ok=False, at_ms=1100).until_ms == 3100
    assert breakers.may_start(R, 3100)
    assert breakers.record(R, ok=False, at_ms=3200).until_ms == 6200  # 4000 capped at 3000


def test_failures_of_attempts_begun_before_the_pause_do_not_extend_it():
    breakers = Breakers(failures_to_open=5, failing_for_ms=0, first_pause_ms=1000)
    failing(breakers, 5)
    assert breakers.record(R, ok=False, at_ms=900) is None
    assert breakers.paused() == {R: 1000}


def test_a_success_resumes_a_paused_receiver_and_a_probe_not_made_lets_the_next_one_through():
    breakers = Breakers(failures_to_open=5, failing_for_ms=0, first_pause_ms=1000)
    failing(breakers, 5)
    assert breakers.may_start(R, 1000)
    breakers.forget(R)  # claimed elsewhere: no attempt was made
    assert breakers.may_start(R, 1000)
    change = breakers.record(R, ok=True, at_ms=1001)
    assert change is not None and not change.paused
    assert breakers.may_start(R, 1001) and breakers.paused() == {}


def test_failures_in_a_burst_pause_only_once_they_have_lasted_long_enough():
    breakers = Breakers(failures_to_open=3, failing_for_ms=30_000, first_pause_ms=1000)
    for at_ms in (0, 10, 20, 29_999):  # a receiver down for half a minute, not yet long enough
        assert breakers.record(R, ok=False, at_ms=at_ms) is None
    change = breakers.record(R, ok=False, at_ms=30_000)
    assert change is not None and change.paused and change.until_ms == 31_000


def test_a_retry_by_hand_ends_the_pause_at_once_as_its_probe():
    breakers = Breakers(failures_to_open=5, failing_for_ms=0, first_pause_ms=60_000)
    failing(breakers, 5)
    breakers.probe_now(R, 100)
    assert breakers.may_start(R, 100) and breakers.probing(R)
    assert not breakers.may_start(R, 100)
