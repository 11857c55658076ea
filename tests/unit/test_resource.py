"""``escalation_json`` writes what ``orjson.dumps(escalation_resource(...))`` writes, byte for byte."""

from __future__ import annotations

import itertools

import attrs
import orjson
import pytest

from escalated.domain.convert import content_to_json
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
    content_json = content_to_json(esc.content)
    assert escalation_json(esc, content_json=content_json) == orjson.dumps(escalation_resource(esc, content_json=content_json))


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
    esc = attrs.evolve(_created(ODD, fields=True, resume=RESUMES[2], deadline=True, default="deny"), **change)
    content_json = content_to_json(esc.content)
    assert escalation_json(esc, content_json=content_json) == orjson.dumps(escalation_resource(esc, content_json=content_json))


def test_content_stored_without_response_fields_is_written_as_its_resource():
    esc = _created("plain", fields=False, resume=None, deadline=False, default=None)
    content_json = {k: v for k, v in content_to_json(esc.content).items() if k != "responseFields"}
    assert escalation_json(esc, content_json=content_json) == orjson.dumps(escalation_resource(esc, content_json=content_json))
