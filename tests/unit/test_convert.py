"""The content's JSON: written out by hand on the hot path, the same as the
one converter gives (the database, the resources and the notifications read it)."""

from __future__ import annotations

import orjson
import pytest

from escalated.domain.convert import content_from_json, content_to_json, converter
from escalated.domain.models import Choice, Content, NumberField, SelectField, SelectOption, Subject

CONTENTS = [
    Content(subject=Subject("order", "o-1", "Order 1"), question="Refund?", evidence=(), choices=(Choice("a", "A"),)),
    Content(
        subject=Subject("t", "i", "l"),
        question="q\u00e9\x01",
        evidence=("one", "two", ""),
        choices=(Choice("approve", "Approve"), Choice("deny", "Deny")),
    ),
    Content(
        subject=Subject("t", "i", "l"),
        question="q",
        evidence=("e",),
        choices=(Choice("x", "X"),),
        response_fields=(
            NumberField("amount", "Amount", min=0.0, step=0.5),
            NumberField("n", "N"),
            SelectField("s", "S", (SelectOption("v", "V"),)),
        ),
    ),
]


@pytest.mark.parametrize("content", CONTENTS)
def test_content_to_json_is_what_the_converter_writes_byte_for_byte(content):
    ours = content_to_json(content)
    assert orjson.dumps(ours) == orjson.dumps(converter.unstructure(content, Content))
    assert content_from_json(ours) == content
