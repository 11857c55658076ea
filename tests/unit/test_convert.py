"""The content's JSON, as the database, the resources and the notifications
read it: written by hand (its response fields by the one converter), and
encoded straight from the value objects by ``content_bytes``."""

from __future__ import annotations

import orjson
import pytest

from escalated.domain.convert import content_bytes, content_from_json, content_to_json
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


# What the converter wrote when it converted the whole content (cattrs), kept as the reference.
EXPECTED = [
    b'{"subject":{"type":"order","id":"o-1","label":"Order 1"},"question":"Refund?","evidence":[],'
    b'"choices":[{"id":"a","label":"A"}],"responseFields":[]}',
    b'{"subject":{"type":"t","id":"i","label":"l"},"question":"q\xc3\xa9\\u0001","evidence":["one","two",""],'
    b'"choices":[{"id":"approve","label":"Approve"},{"id":"deny","label":"Deny"}],"responseFields":[]}',
    b'{"subject":{"type":"t","id":"i","label":"l"},"question":"q","evidence":["e"],"choices":[{"id":"x","label":"X"}],'
    b'"responseFields":[{"name":"amount","label":"Amount","min":0.0,"step":0.5,"type":"number"},'
    b'{"name":"n","label":"N","type":"number"},{"name":"s","label":"S","options":[{"value":"v","label":"V"}],"type":"select"}]}',
]


@pytest.mark.parametrize(("content", "expected"), list(zip(CONTENTS, EXPECTED, strict=True)))
def test_content_json_is_what_the_converter_wrote_byte_for_byte(content, expected):
    ours = content_to_json(content)
    assert orjson.dumps(ours) == expected
    assert content_bytes(content) == expected
    assert content_from_json(ours) == content
