from escalated.timeutil import format_ms
from escalated.tui.format import age_text, clip, countdown_text, sla_text, urgency

T0 = 1_795_000_000_000


def live(*, created_ms: int, deadline_ms: int | None, status: str = "open") -> dict:
    return {"status": status, "createdAt": format_ms(created_ms), "deadlineAt": deadline_ms and format_ms(deadline_ms)}


def test_age_uses_the_largest_unit():
    assert [age_text(T0, T0 + s * 1000) for s in (0, 59, 60, 3599, 3600, 86400 * 2)] == [
        "0s", "59s", "1m", "59m", "1h", "2d",
    ]


def test_countdown_is_minutes_seconds_under_an_hour_then_hours():
    assert countdown_text(T0 + 899_999, T0) == "14:59"
    assert countdown_text(T0 + 3_900_000, T0) == "1h05m"
    assert countdown_text(T0 - 1000, T0) == "overdue"


def test_urgency_turns_amber_then_red_as_the_deadline_nears():
    escalation = live(created_ms=T0, deadline_ms=T0 + 600_000)
    assert urgency(escalation, T0 + 100_000) == "ok"
    assert urgency(escalation, T0 + 400_000) == "warn"
    assert urgency(escalation, T0 + 500_000) == "critical"
    assert urgency(escalation, T0 + 600_001) == "overdue"


def test_the_last_minute_is_critical_even_for_long_slas():
    escalation = live(created_ms=T0, deadline_ms=T0 + 86_400_000)
    assert urgency(escalation, T0 + 86_400_000 - 30_000) == "critical"


def test_settled_escalations_show_how_they_ended_not_a_countdown():
    resolved = {**live(created_ms=T0, deadline_ms=T0 + 1000, status="resolved"), "resolution": {"resolvedBy": "timeout"}}
    assert sla_text(resolved, T0) == "timeout"
    assert urgency(resolved, T0 + 5000) == "none"
    assert sla_text(live(created_ms=T0, deadline_ms=None), T0) == "—"


def test_clip_keeps_one_line_within_width():
    assert clip("a  long\nquestion text", 10) == "a long qu…"
    assert clip("short", 10) == "short"


def test_a_time_shows_in_the_local_zone_with_utc_beside_it(monkeypatch):
    import time

    from escalated.tui.format import local_time

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        assert local_time("2026-11-25T18:05:00Z") == "2026-11-25 23:35 (18:05 UTC)"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert local_time(None) == "—"
