"""The one cattrs converter: value objects <-> JSON-shaped dicts, camelCase
(a content, whose classes are msgspec Structs, is converted by hand here).

Built once at import; generated (un)structure functions are cached by
cattrs, so the hot paths pay only for the dict building.
"""

from __future__ import annotations

from typing import Any

import attrs
import cattrs
import msgspec
import orjson
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.strategies import configure_tagged_union

from escalated.domain.models import Choice, Content, NumberField, ResponseField, SelectField, Subject


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _overrides(cls: type) -> dict[str, Any]:
    return {a.name: override(rename=camel(a.name), omit_if_default=a.name in ("min", "step", "rule")) for a in attrs.fields(cls)}


converter = cattrs.Converter()
converter.register_unstructure_hook_factory(
    attrs.has, lambda cls: make_dict_unstructure_fn(cls, converter, **_overrides(cls))
)
converter.register_structure_hook_factory(
    attrs.has, lambda cls: make_dict_structure_fn(cls, converter, **_overrides(cls))
)
configure_tagged_union(
    NumberField | SelectField,
    converter,
    tag_name="type",
    tag_generator={NumberField: "number", SelectField: "select"}.__getitem__,
)


def content_to_json(content: Content) -> dict[str, Any]:
    """The content as the API writes it (camelCase; response fields as their tagged union, by cattrs)."""
    s = content.subject
    return {
        "subject": {"type": s.type, "id": s.id, "label": s.label},
        "question": content.question,
        "evidence": list(content.evidence),
        "choices": [{"id": c.id, "label": c.label} for c in content.choices],
        "responseFields": [converter.unstructure(f, ResponseField) for f in content.response_fields],
    }


class _ContentJson(msgspec.Struct, gc=False, rename="camel"):
    """A content without response fields, as ``content_to_json`` shapes it:
    msgspec writes its Subject and Choices (attrs classes) field by field, in
    their order, and escapes text as orjson does, code point for code point."""

    subject: Any
    question: str
    evidence: Any
    choices: Any
    response_fields: Any = ()


_encode = msgspec.json.Encoder().encode


def content_bytes(content: Content) -> bytes:
    """``orjson.dumps(content_to_json(content))``, byte for byte: the JSON a
    create stores and answers. Without response fields it is written
    straight from the value objects, no dict in between (a third of the cost)."""
    if content.response_fields:  # the tagged union and its numbers: cattrs and orjson
        return orjson.dumps(content_to_json(content))
    return _encode(_ContentJson(content.subject, content.question, content.evidence, content.choices))


def content_from_json(data: dict[str, Any]) -> Content:
    """``content_to_json``'s inverse (``responseFields`` may be absent: none)."""
    s = data["subject"]
    return Content(
        Subject(s["type"], s["id"], s["label"]),
        data["question"],
        tuple(data["evidence"]),
        tuple([Choice(c["id"], c["label"]) for c in data["choices"]]),
        tuple([converter.structure(f, ResponseField) for f in data.get("responseFields", ())]),  # type: ignore[arg-type]
    )
