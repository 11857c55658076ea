"""``escalation_json`` writes what ``orjson.dumps(escalation_resource(...))`` writes, byte for byte, and
``content_bytes`` what ``orjson.dumps(content_to_json(...))`` writes."""

from __future__ import annotations

import itertools

import msgspec
import orjson
import pytest

from escalated.domain.convert import content_bytes, content_to_json
from escalated.domain.models import (
    Approval,
    Cancellation,
    Choice,
    Content,
    Escalation,
    HistoryEntry,
    NumberField,
    Resolution,
    Resume,
    SelectField,
    SelectOption,
    Subject,
)
from escalated.domain.resource import escalation_json, escalation_resource

AT = 1_764_300_000_123
ODD = 'a "quoted" \\ back\nslash, é, 𝄞, \u2028'


def _content(text: str, *, fields: bool) -> Content:
    return Content(
        subject=Subject("order", f"o-{text}", f"Order {text}"),
        question=f"Refund {text}?",
        evidence=(f"line {text}", ""),
        choices=(Choice("approve", f"Approve {text}"), Choice("deny", "Deny")),
        response_fields=(
            NumberField(name="amount", label=text, min=0, step=0.5),
            SelectField(name="tier", label="Tier", options=(SelectOption("a", text),)),
        )
        if fields
        else (),
    )


def _created(text: str, *, fields: bool, resume: Resume | None, deadline: bool, default: str | None) -> Escalation:
    return Escalation(
        id="esc_01JD0000000000000000000000",
        workspace_id="default",
        status="open",
        policy="refunds.large",
        agent_id=f"agent {text}",
        run_id=f"run {text}",
        content=_content(text, fields=fields),
        created_ms=AT,
        created_by=f"key:{text}",
        resume=resume,
        deadline_ms=AT + 3_600_000 if deadline else None,
        default_choice=default,
        history=(HistoryEntry(event="created", by=f"key:{text}", at_ms=AT),),
    )


RESUMES = (None, Resume(url="http://127.0.0.1:9/r?a=\"b\""), Resume(url="https://x.test/r", secret="whsec_1"))


@pytest.mark.parametrize(
    ("text", "fields", "resume", "deadline", "default"),
    list(itertools.product(("plain", ODD), (False, True), RESUMES, (False, True), (None, "deny", ODD))),
)
def test_a_new_escalation_is_written_as_its_resource(text, fields, resume, deadline, default):
    esc = _created(text, fields=fields, resume=resume, deadline=deadline, default=default)
    assert escalation_json(esc) == orjson.dumps(escalation_resource(esc))
    assert content_bytes(esc.content) == orjson.dumps(content_to_json(esc.content))


@pytest.mark.parametrize(
    "change",
    [
        {"status": "acknowledged", "acknowledged_by": "u", "acknowledged_ms": AT + 1},
        {"assignee": "user:ann"},
        {"level": 1, "history": (HistoryEntry("created", "k", AT), HistoryEntry("escalated", "clock", AT + 5, level=1))},
        {"approvals": (Approval(by="ann", choice="approve", at_ms=AT + 2),)},
        {"status": "resolved", "resolution": Resolution(choice="deny", resolved_by="human", answered_by="ann", answered_at_ms=AT + 9)},
        {"status": "cancelled", "cancellation": Cancellation(cancelled_by="k", cancelled_at_ms=AT + 3, reason=ODD)},
        {"history": (HistoryEntry("created", "k", AT + 7),)},
    ],
)
def test_any_other_escalation_is_written_as_its_resource(change):
    for fields in (True, False):
        esc = msgspec.structs.replace(_created(ODD, fields=fields, resume=RESUMES[2], deadline=True, default="deny"), **change)
        assert escalation_json(esc) == orjson.dumps(escalation_resource(esc))



@pytest.mark.parametrize("code_points", [range(0, 0x800), range(0x800, 0xD800), range(0xE000, 0x110000)])
def test_content_text_is_escaped_as_orjson_escapes_it(code_points):
    # msgspec writes the fast paths' text: every code point a body can hold, as orjson writes it.
    text = "".join(map(chr, code_points))
    esc = _created(text, fields=False, resume=Resume(url=text, secret=text), deadline=True, default=text)
    assert escalation_json(esc) == orjson.dumps(escalation_resource(esc))
    assert content_bytes(esc.content) == orjson.dumps(content_to_json(esc.content))
