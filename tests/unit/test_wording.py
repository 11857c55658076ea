"""How an escalation reads to a reviewer: durations, the outcome on timeout, labels."""

from __future__ import annotations

from escalated.domain.models import Choice, NumberField, SelectField, SelectOption
from escalated.domain.wording import choice_label, duration_words, response_words, timeout_outcome

H = 3_600_000
MIN = 60_000


def test_a_duration_reads_in_its_two_largest_units():
    assert duration_words(3 * H + 54 * MIN + 5_000) == "3 h 54 min"
    assert duration_words(2 * 24 * H + 4 * H) == "2 d 4 h"
    assert duration_words(45_000) == "45 s"


def test_a_duration_drops_a_zero_second_unit():
    assert duration_words(2 * 24 * H + 5 * MIN) == "2 d"
    assert duration_words(H) == "1 h"
    assert duration_words(0) == "0 s" and duration_words(-5) == "0 s"


def test_the_outcome_on_timeout_names_the_default_by_its_label_and_when():
    assert timeout_outcome(deadline_ms=4 * H, default_label="Deny", now_ms=6 * MIN) == "in 3 h 54 min, Deny applies"


def test_past_the_deadline_the_outcome_applies_now_and_without_an_sla_nothing_happens():
    assert timeout_outcome(deadline_ms=1_000, default_label="Deny", now_ms=5_000) == "now, Deny applies"
    assert timeout_outcome(deadline_ms=None, default_label=None, now_ms=0).startswith("no deadline")


def test_a_choice_is_named_by_its_label_from_objects_or_dicts():
    choices = (Choice(id="deny", label="Deny the refund"), Choice(id="approve", label="Approve"))
    assert choice_label(choices, "deny") == "Deny the refund"
    assert choice_label([{"id": "a", "label": "Approve"}], "a") == "Approve"
    assert choice_label(choices, "gone") == "gone" and choice_label(choices, None) is None


def test_a_response_reads_as_field_and_option_labels():
    fields = (
        SelectField(name="reasonCode", label="Reason", options=(SelectOption(value="damaged", label="Damaged in transit"),)),
        NumberField(name="amount", label="Amount (EUR)"),
    )
    assert response_words(fields, {"amount": 25.0, "reasonCode": "damaged"}) == [
        ("Reason", "Damaged in transit"),
        ("Amount (EUR)", "25"),
    ]
    assert response_words(fields, None) == []
