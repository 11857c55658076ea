"""Domain validation (CONTRACT §3) without a server: value objects, field paths, the number grid."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from escalated.domain.models import Choice, NumberField, SelectField, SelectOption, Subject
from escalated.domain.validation import number_problem, url_problem, validate_cancel, validate_create
from escalated.errors import ValidationFailed

BODY = {
    "policy": "refunds.large",
    "agentId": "billing-agent",
    "runId": "thread-42",
    "subject": {"type": "order", "id": "o-981", "label": "Order #981"},
    "question": "Refund?",
    "evidence": ["a", "b"],
    "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
    "responseFields": [
        {"type": "number", "name": "amount", "label": "Amount", "min": 0, "step": 5},
        {"type": "select", "name": "why", "label": "Why", "options": [{"value": "dup", "label": "Duplicate"}]},
    ],
    "resume": {"mode": "webhook", "url": "http://127.0.0.1:9000/resume", "secret": "s"},
}


def problems(body: dict) -> list[str]:
    with pytest.raises(ValidationFailed) as info:
        validate_create(body)
    return [e["field"] for e in info.value.errors]


def test_valid_body_becomes_value_objects():
    req = validate_create(BODY)
    assert (req.policy, req.agent_id, req.run_id) == ("refunds.large", "billing-agent", "thread-42")
    assert req.content.subject == Subject("order", "o-981", "Order #981")
    assert req.content.choices == (Choice("approve", "Approve"), Choice("deny", "Deny"))
    assert req.content.response_fields == (
        NumberField(name="amount", label="Amount", min=0, step=5),
        SelectField(name="why", label="Why", options=(SelectOption("dup", "Duplicate"),)),
    )
    assert req.resume.url == "http://127.0.0.1:9000/resume" and req.resume.secret == "s"


def test_value_objects_are_frozen():
    req = validate_create(BODY)
    with pytest.raises(AttributeError):  # attrs' FrozenInstanceError is one too
        req.policy = "other"  # type: ignore[misc]


def test_problems_are_collected_not_stopped_at_the_first():
    body = {**BODY, "agentId": 1, "evidence": [1, "ok", 2], "choices": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}
    assert problems(body) == ["agentId", "evidence[0]", "evidence[2]", "choices[1].id"]


def test_empty_body_names_every_required_field():
    assert set(problems({})) == {"policy", "agentId", "runId", "subject", "question", "evidence", "choices"}


def test_detail_counts_the_problems():
    with pytest.raises(ValidationFailed) as info:
        validate_create({**BODY, "agentId": "", "runId": ""})
    assert info.value.detail == "2 problems"


def test_whitespace_only_strings_are_empty():
    assert problems({**BODY, "question": "   "}) == ["question"]


def test_check_url_hook_can_veto_a_resume_url():
    assert problems_with_hook("http://10.0.0.1/x") == ["resume.url"]


def problems_with_hook(url: str) -> list[str]:
    with pytest.raises(ValidationFailed) as info:
        validate_create({**BODY, "resume": {"mode": "webhook", "url": url}}, check_url=lambda u: "private")
    return [e["field"] for e in info.value.errors]


@pytest.mark.parametrize("url", ["http://x", "https://example.com/a?b=c", "http://127.0.0.1:65535/"])
def test_absolute_http_urls_pass(url):
    assert url_problem(url) is None


@pytest.mark.parametrize("url", ["", "/relative", "ftp://h/x", "http://", "http://h:99999/", "mailto:a@b", "javascript:alert(1)"])
def test_other_urls_fail(url):
    assert url_problem(url)


def test_cancel_reason_is_optional_and_unknown_fields_fail():
    assert validate_cancel({}) is None
    assert validate_cancel({"reason": "done"}) == "done"
    with pytest.raises(ValidationFailed):
        validate_cancel({"because": "x"})


# -- the number grid -----------------------------------------------------------

steps = st.sampled_from([0.01, 0.1, 0.25, 0.5, 1, 5, 1000])
mins = st.none() | st.sampled_from([-100, -0.5, 0, 0.1, 3, 10.5])


@given(lo=mins, step=steps, k=st.integers(min_value=0, max_value=10_000))
def test_values_on_the_grid_from_min_are_accepted(lo, step, k):
    base = lo if lo is not None else 0
    assert number_problem(base + k * step, NumberField(name="n", label="N", min=lo, step=step)) is None


@given(lo=mins, step=steps, k=st.integers(min_value=0, max_value=10_000))
def test_values_between_grid_points_are_refused(lo, step, k):
    base = lo if lo is not None else 0
    assert number_problem(base + (k + 0.5) * step, NumberField(name="n", label="N", min=lo, step=step))


@given(lo=st.floats(min_value=-1e6, max_value=1e6), below=st.floats(min_value=1e-3, max_value=1e6))
def test_values_below_min_are_refused(lo, below):
    assume(lo - below < lo)
    assert "at least" in number_problem(lo - below, NumberField(name="n", label="N", min=lo))


@pytest.mark.parametrize("value", ["1", None, True, False, float("nan"), float("inf"), [1], {"v": 1}])
def test_non_numbers_are_refused(value):
    assert number_problem(value, NumberField(name="n", label="N")) == "must be a number"


def test_without_step_any_number_from_min_is_accepted():
    assert number_problem(3.14159, NumberField(name="n", label="N", min=3)) is None


def test_without_min_the_grid_counts_from_zero():
    field = NumberField(name="n", label="N", step=0.25)
    assert number_problem(-0.75, field) is None and number_problem(0.3, field)
