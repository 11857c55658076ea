"""What a reviewer sees of a tool call (escalated/agent/toolcall.py): short, readable, never refused."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from escalated.agent.toolcall import ToolCall, arguments_of, describe, idempotency_key
from escalated.domain.limits import FILED_TEXT_BUDGET_CHARS, MAX_BODY_BYTES
from escalated.domain.validation import validate_create


def create_body(call: ToolCall) -> dict:
    described = describe(call)
    return {
        "policy": "tools.refund",
        "agentId": "agent",
        "runId": "run-1",
        "subject": described.subject,
        "question": described.question,
        "evidence": described.evidence,
        "choices": described.choices,
    }


def test_the_evidence_is_the_tool_name_and_its_json_arguments():
    described = describe(ToolCall(name="issue_refund", call_id="c1", arguments='{"order_id": "o-1", "amount": 12}'))
    assert described.subject == {"type": "tool_call", "id": "c1", "label": "issue_refund"}
    assert described.evidence == ["Tool: issue_refund", 'Arguments (JSON): {"order_id": "o-1", "amount": 12}']
    assert described.question == 'Allow issue_refund with {"order_id": "o-1", "amount": 12}?'
    assert [c["id"] for c in described.choices] == ["approve", "reject"]


def test_values_under_secret_looking_names_and_token_looking_values_are_redacted():
    arguments = {"password": "hunter2", "nested": {"client_secret": "s", "Authorization": "x"}, "note": "ain_live_abc", "user": "bob"}
    shown = json.loads(describe(ToolCall(name="t", call_id="c", arguments=arguments)).evidence[1].removeprefix("Arguments (JSON): "))
    assert shown == {
        "password": "[redacted]",
        "nested": {"client_secret": "[redacted]", "Authorization": "[redacted]"},
        "note": "[redacted]",
        "user": "bob",
    }


def test_long_values_are_cut_with_what_was_left_out():
    evidence = describe(ToolCall(name="t", call_id="c", arguments={"body": "x" * 5000, "ids": list(range(80))})).evidence[1]
    assert "(4600 more characters)" in evidence and "… 30 more items" in evidence


def test_python_objects_are_named_never_shown_by_repr_and_run_contexts_are_left_out():
    class RunContextWrapper:
        def __repr__(self) -> str:
            return "SECRET" * 10_000

    @dataclass
    class Refund:
        order_id: str

    kept = arguments_of({"ctx": RunContextWrapper(), "refund": Refund("o-1"), "handle": object()})
    shown = describe(ToolCall(name="t", call_id="c", arguments=kept)).evidence[1]
    assert shown == 'Arguments (JSON): {"refund": {"order_id": "o-1"}, "handle": "<object>"}'


def test_arguments_that_are_not_json_are_shown_as_the_text_the_model_sent():
    assert describe(ToolCall(name="t", call_id="c", arguments="{not json")).evidence[1] == 'Arguments (JSON): "{not json"'


def test_a_long_run_and_call_id_make_a_digest_key_within_the_header_limit():
    assert idempotency_key("run-1", "call_7") == "run-1:call_7"
    assert len(idempotency_key("r" * 300, "c")) <= 255


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3000),
    lambda inner: st.lists(inner, max_size=80) | st.dictionaries(st.text(max_size=300), inner, max_size=80),
    max_leaves=200,
)


@settings(max_examples=60, deadline=None)
@given(name=st.text(max_size=400), call_id=st.text(max_size=400), arguments=json_values, description=st.text(max_size=20_000))
def test_any_call_is_described_within_the_servers_limits(name, call_id, arguments, description):
    body = create_body(ToolCall(name=name, call_id=call_id, arguments=arguments, description=description))
    validate_create(body)  # raises ValidationFailed on anything the server would refuse with 422
    texts = [body["question"], *body["evidence"]]
    assert sum(map(len, texts)) <= FILED_TEXT_BUDGET_CHARS
    assert len(json.dumps(body).encode()) < MAX_BODY_BYTES
