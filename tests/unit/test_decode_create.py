"""``decode_create``, the create's typed decoder, against the path it stands
in front of (orjson, then ``validate_create``): whatever it takes, that path
takes too and builds the same request; whatever that path refuses (400 or
422), it refuses, so the caller falls back and the error is the one that
path writes."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from escalated.domain.limits import MAX_CHOICES, MAX_EVIDENCE_ITEMS, MAX_TEXT_CHARS
from escalated.domain.validation import decode_create, validate_create
from escalated.errors import ValidationFailed

BODY = {
    "policy": "refunds.large",
    "agentId": "billing-agent",
    "runId": "thread-42",
    "subject": {"type": "order", "id": "o-981", "label": "Order #981"},
    "question": "Refund 1,200 EUR?",
    "evidence": ["Customer reports the parcel never arrived.", "", "  "],
    "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
    "resume": {"mode": "webhook", "url": "http://127.0.0.1:9/resume", "secret": "whsec_0123"},
}


def slow_path(raw: bytes, check_url=None):
    """What the create route did with every body: the request, or None when it answered 400 or 422."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    try:
        return validate_create(body, check_url=check_url)
    except ValidationFailed:
        return None


def agree(raw: bytes, check_url=None):
    fast = decode_create(raw, check_url=check_url)
    if fast is not None:
        assert fast == slow_path(raw, check_url), raw
    return fast


@pytest.mark.parametrize(
    "body",
    [
        BODY,
        {k: v for k, v in BODY.items() if k != "resume"},
        {**BODY, "resume": None, "responseFields": None},
        {**BODY, "responseFields": []},
        {**BODY, "resume": {"url": "https://example.com/x"}},
        {**BODY, "resume": {"url": "https://example.com/x", "secret": None}},
        {**BODY, "evidence": []},
        {**BODY, "choices": [{"id": "a:b.c-d_e", "label": "x" * MAX_TEXT_CHARS}]},
        {**BODY, "question": "é" * MAX_TEXT_CHARS},
        {**BODY, "choices": [{"id": f"c{i}", "label": "L"} for i in range(MAX_CHOICES)]},
        {**BODY, "evidence": ["e"] * MAX_EVIDENCE_ITEMS},
    ],
)
def test_valid_bodies_without_response_fields_are_read_as_validate_create_reads_them(body):
    raw = orjson.dumps(body)
    assert agree(raw) is not None
    assert decode_create(raw) == validate_create(body)


@pytest.mark.parametrize(
    "body",
    [
        {**BODY, "responseFields": [{"type": "number", "name": "n", "label": "N"}]},
        {**BODY, "policy": "Not.A.Key"},
        {**BODY, "policy": None},
        {**BODY, "agentId": ""},
        {**BODY, "runId": " \t"},
        {**BODY, "question": "a\x00b"},
        {**BODY, "question": "x" * (MAX_TEXT_CHARS + 1)},
        {**BODY, "subject": {"type": "order", "id": "o", "label": "L", "extra": 1}},
        {**BODY, "subject": None},
        {**BODY, "evidence": ["x" * (MAX_TEXT_CHARS + 1)]},
        {**BODY, "evidence": ["e"] * (MAX_EVIDENCE_ITEMS + 1)},
        {**BODY, "evidence": [1]},
        {**BODY, "choices": []},
        {**BODY, "choices": [{"id": f"c{i}", "label": "L"} for i in range(MAX_CHOICES + 1)]},
        {**BODY, "choices": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]},
        {**BODY, "choices": [{"id": "no spaces", "label": "A"}]},
        {**BODY, "choices": [{"id": "a", "label": ""}]},
        {**BODY, "resume": {"mode": "poll", "url": "http://x/y"}},
        {**BODY, "resume": {"mode": None, "url": "http://x/y"}},
        {**BODY, "resume": {"url": "ftp://x/y"}},
        {**BODY, "resume": {"url": "http://x/y", "secret": ""}},
        {**BODY, "resume": {"url": "http://x/y", "extra": True}},
        {**BODY, "unknown": 1},
    ],
)
def test_invalid_bodies_and_response_fields_are_left_to_the_usual_path(body):
    assert decode_create(orjson.dumps(body)) is None


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"[]",
        b"null",
        b'{"policy": "a", "policy": 1}',  # orjson keeps the last; both refuse it here
        b"\xef\xbb\xbf" + orjson.dumps(BODY),
        orjson.dumps(BODY) + b"x",
        orjson.dumps(BODY).replace(b"Approve", b"\\ud800"),
        orjson.dumps(BODY).replace(b"Approve", b"\xff"),
        orjson.dumps(BODY).replace(b"Approve", b"\xed\xa0\x80"),
        orjson.dumps(BODY).replace(b'"Approve"', b'"App\trove"'),
        orjson.dumps(BODY).replace(b"}", b",}", 1),
        orjson.dumps({**BODY, "responseFields": []}).replace(b"[]", b"[" + b"[" * 5000 + b"]" * 5000 + b"]"),
    ],
)
def test_what_is_not_json_is_left_to_the_usual_path(raw):
    assert decode_create(raw) is None


def test_a_repeated_key_reads_as_its_last_value_as_orjson_reads_it():
    raw = orjson.dumps(BODY)[:-1] + b',"agentId":"second"}'
    assert agree(raw).agent_id == "second"


def test_the_callback_check_vetoes_as_it_does_in_validate_create():
    raw = orjson.dumps(BODY)
    assert decode_create(raw, check_url=lambda url: "a private address") is None
    assert decode_create(raw, check_url=lambda url: None) == validate_create(BODY)


_texts = st.sampled_from(["", " ", "\t\n", "ok", "a\x00", "x" * (MAX_TEXT_CHARS + 1), "refunds.large", "Deny", "é"])
_ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)  # orjson writes no wider
_values = st.one_of(
    _texts, st.none(), _ints, st.booleans(), st.lists(_texts, max_size=3), st.dictionaries(_texts, _texts, max_size=2)
)


@settings(max_examples=400, deadline=None)
@given(
    replace=st.dictionaries(st.sampled_from([*BODY, "responseFields", "other"]), _values, max_size=3),
    subject=st.dictionaries(st.sampled_from(["type", "id", "label", "x"]), _values, max_size=2),
    choice=st.dictionaries(st.sampled_from(["id", "label", "y"]), _values, max_size=2),
    resume=st.dictionaries(st.sampled_from(["mode", "url", "secret", "z"]), _values, max_size=2),
    drop=st.sets(st.sampled_from(list(BODY)), max_size=2),
)
def test_changed_bodies_are_taken_only_as_the_usual_path_takes_them(replace, subject, choice, resume, drop):
    body = {k: v for k, v in BODY.items() if k not in drop} | replace
    if "subject" not in replace and "subject" in body:
        body["subject"] = {**BODY["subject"], **subject}
    if "choices" not in replace and "choices" in body:
        body["choices"] = [{**BODY["choices"][0], **choice}, BODY["choices"][1]]
    if "resume" not in replace and "resume" in body:
        body["resume"] = {**BODY["resume"], **resume}
    raw = orjson.dumps(body)
    fast = agree(raw)
    if slow_path(raw) is not None and not body.get("responseFields"):
        assert fast is not None  # the usual valid create does take the fast path


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=40), at=st.integers(min_value=0, max_value=400))
def test_bytes_spliced_into_a_valid_body_are_never_taken_where_orjson_refuses(raw, at):
    body = orjson.dumps(BODY)
    agree(body[:at] + raw + body[at:])
