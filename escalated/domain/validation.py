"""Validation of what agents and reviewers send (CONTRACT §3).

Every problem is collected with its field path, so one 422 lists them all.
Validation works on the decoded JSON and only then builds value objects,
so building can not fail.

A create's body is read first by ``decode_create``, a typed decoder
(msgspec) that only says whether it is a valid create: it checks the JSON,
the types and the unknown fields in C, the rest as ``validate_create``
does. A body it does not take is read again the usual way (orjson, then
``validate_create``), which says what is wrong, so every 400 and 422 is
the one that path writes.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import SplitResult, urlsplit

import attrs
import msgspec

from escalated.domain.limits import MAX_CHOICES, MAX_EVIDENCE_ITEMS, MAX_TEXT_CHARS
from escalated.domain.models import (
    Choice,
    Content,
    Escalation,
    NumberField,
    ResponseField,
    Resume,
    SelectField,
    SelectOption,
    Subject,
)
from escalated.domain.nul import NUL_MESSAGE
from escalated.errors import ValidationFailed, field_error

POLICY_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")
CHOICE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# The names the server's modules use (http/openapi too); the values live in
# domain/limits, which the agent side imports to cut what it files.
MAX_TEXT = MAX_TEXT_CHARS
MAX_EVIDENCE = MAX_EVIDENCE_ITEMS

CREATE_FIELDS = frozenset(
    {"policy", "agentId", "runId", "subject", "question", "evidence", "choices", "responseFields", "resume"}
)
REQUIRED_CREATE_FIELDS = ("policy", "agentId", "runId", "subject", "question", "evidence", "choices")
_SUBJECT_PARTS = ("type", "id", "label")
_SUBJECT_FIELDS = frozenset(_SUBJECT_PARTS)
_CHOICE_FIELDS = frozenset({"id", "label"})
_NUMBER_FIELD_FIELDS = frozenset({"type", "name", "label", "min", "step"})
_SELECT_FIELD_FIELDS = frozenset({"type", "name", "label", "options"})
_OPTION_FIELDS = frozenset({"value", "label"})
_RESUME_FIELDS = frozenset({"mode", "url", "secret"})
_DECIDE_FIELDS = frozenset({"choice", "reason", "response"})
_CANCEL_FIELDS = frozenset({"reason"})
NOT_A_URL = "must be an absolute http(s) URL"


# Every create matches its policy key and choice ids, agents send the same
# few, and a regex match costs several times a cache hit: verdicts are kept.
@functools.lru_cache(maxsize=1024)
def _is_policy_key(text: str) -> bool:
    return POLICY_KEY.match(text) is not None


@functools.lru_cache(maxsize=1024)
def _is_choice_id(text: str) -> bool:
    return CHOICE_ID.match(text) is not None


# Built on every create: a Struct, as the content it carries (domain/models.py).
class CreateRequest(msgspec.Struct, frozen=True, gc=False):
    policy: str
    agent_id: str
    run_id: str
    content: Content
    resume: Resume | None


@attrs.frozen
class DecideRequest:
    choice: str
    reason: str | None
    response: dict[str, Any] | None


class _Problems:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append(field_error(field, message))

    def raise_if_any(self) -> None:
        if self.items:
            n = len(self.items)
            raise ValidationFailed(f"{n} problem{'s' if n != 1 else ''}", errors=self.items)

    def unknown_fields(self, obj: dict[str, Any], allowed: frozenset[str], prefix: str) -> None:
        if obj.keys() <= allowed:  # the usual case, without building and sorting a set
            return
        for name in sorted(set(obj) - allowed):
            self.add(f"{prefix}{name}", "unknown field")

    def string(
        self, obj: dict[str, Any], name: str, prefix: str = "", *, required: bool = True, nonempty: bool = True
    ) -> str | None:
        """``obj[name]`` if it is an acceptable string; else None and a problem at ``prefix + name``.

        The path is only built when there is a problem: valid bodies are the usual case.
        """
        value = obj.get(name)
        if value is None:
            if required:
                self.add(prefix + name, "is required")
            return None
        if not isinstance(value, str):
            self.add(prefix + name, "must be a string")
            return None
        if nonempty and (not value or value.isspace()):  # blank (without copying it as strip() would)
            self.add(prefix + name, "must not be empty")
            return None
        if len(value) > MAX_TEXT:
            self.add(prefix + name, f"must be at most {MAX_TEXT} characters")
            return None
        if "\x00" in value:  # holds_nul: PostgreSQL text cannot hold it, refused alike on either backend
            self.add(prefix + name, NUL_MESSAGE)
            return None
        return value


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def validate_create(body: dict[str, Any], *, check_url: Callable[[str], str | None] | None = None) -> CreateRequest:
    """Validate a create body; ``check_url(url) -> str | None`` may veto a resume URL."""
    p = _Problems()
    p.unknown_fields(body, CREATE_FIELDS, "")
    policy = p.string(body, "policy")
    if policy is not None and not _is_policy_key(policy):
        p.add("policy", "must be dotted lower-case words, e.g. refunds.large")
    agent_id = p.string(body, "agentId")
    run_id = p.string(body, "runId")
    question = p.string(body, "question")
    subject = _subject(body.get("subject"), p)
    evidence = _evidence(body.get("evidence"), p)
    choices = _choices(body.get("choices"), p)
    fields = _response_fields(body.get("responseFields"), p)
    resume = _resume(body.get("resume"), p, check_url)
    p.raise_if_any()
    # raise_if_any refused the body if any required part was missing.
    assert subject is not None and question is not None and policy is not None and agent_id is not None and run_id is not None
    # By position (subject, question, evidence, choices, response_fields; policy, agent_id, run_id, content,
    # resume): keywords make a dict per object on every create.
    return CreateRequest(policy, agent_id, run_id, Content(subject, question, evidence, choices, fields), resume)


# What decode_create reads: the shape of a create, types, field names and
# lengths (their messages are validate_create's). gc=False: nothing in them
# refers back to itself.
_Text = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TEXT)]  # blank and NUL: decode_create


class _SubjectIn(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: _Text
    id: _Text
    label: _Text


class _ChoiceIn(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: _Text
    label: _Text


class _ResumeIn(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    url: _Text
    mode: str = "webhook"
    secret: _Text | None = None


class _CreateIn(
    msgspec.Struct,
    forbid_unknown_fields=True,
    gc=False,
    rename={"agent_id": "agentId", "run_id": "runId", "response_fields": "responseFields"},
):
    policy: _Text
    agent_id: _Text
    run_id: _Text
    subject: _SubjectIn
    question: _Text
    evidence: Annotated[list[Annotated[str, msgspec.Meta(max_length=MAX_TEXT)]], msgspec.Meta(max_length=MAX_EVIDENCE)]
    choices: Annotated[list[_ChoiceIn], msgspec.Meta(min_length=1, max_length=MAX_CHOICES)]
    # Response fields go the usual way: only none (absent, null or []) is read here.
    response_fields: list[msgspec.Raw] | None = None
    resume: _ResumeIn | None = None


_decode_create = msgspec.json.Decoder(_CreateIn).decode


def decode_create(raw: bytes, *, check_url: Callable[[str], str | None] | None = None) -> CreateRequest | None:
    """The create ``raw`` holds when it is a valid one with no response
    fields: what ``validate_create(orjson.loads(raw))`` returns for it.
    None for anything else (not JSON, not a valid create, response fields):
    the caller reads such a body the usual way, which says what is wrong.

    Never more lenient than that path: the JSON both decoders take is the
    same (UTF-8 only, no lone surrogates, the last of repeated keys), and
    where they could differ (a repeated key whose first value has another
    type) this one refuses.
    """
    # A NUL in JSON text is always written \u0000: one scan of the body
    # instead of one per text (a false alarm, such as an escaped backslash
    # before "u0000", only sends the body the usual way).
    if b"\\u0000" in raw:
        return None
    try:
        b = _decode_create(raw)
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError, UnicodeDecodeError
        return None
    s, resume, choices = b.subject, b.resume, b.choices
    # The rest of _Problems.string's checks (the decoder checked the lengths):
    # no blank text. A policy key and the choice ids match patterns without spaces.
    if (
        b.agent_id.isspace() or b.run_id.isspace() or b.question.isspace()
        or s.type.isspace() or s.id.isspace() or s.label.isspace()
        or b.response_fields or not _is_policy_key(b.policy)
    ):  # fmt: skip
        return None
    ids = set()
    for c in choices:
        if c.id in ids or c.label.isspace() or not _is_choice_id(c.id):
            return None
        ids.add(c.id)
    valid_resume = None
    if resume is not None:
        url, secret = resume.url, resume.secret
        if (
            url.isspace() or (secret is not None and secret.isspace()) or resume.mode != "webhook"
            or url_problem(url) or (check_url and check_url(url))
        ):  # fmt: skip
            return None
        valid_resume = Resume(url, "webhook", secret)
    content = Content(Subject(s.type, s.id, s.label), b.question, tuple(b.evidence), tuple([Choice(c.id, c.label) for c in choices]))
    return CreateRequest(b.policy, b.agent_id, b.run_id, content, valid_resume)


def _subject(value: Any, p: _Problems) -> Subject | None:
    if value is None:
        p.add("subject", "is required")
        return None
    if not isinstance(value, dict):
        p.add("subject", "must be an object with type, id and label")
        return None
    p.unknown_fields(value, _SUBJECT_FIELDS, "subject.")
    type_, id_, label = p.string(value, "type", "subject."), p.string(value, "id", "subject."), p.string(value, "label", "subject.")
    if type_ is None or id_ is None or label is None:
        return None
    return Subject(type_, id_, label)


def _evidence(value: Any, p: _Problems) -> tuple[str, ...]:
    if value is None:
        p.add("evidence", "is required")
        return ()
    if not isinstance(value, list):
        p.add("evidence", "must be an array of strings")
        return ()
    if len(value) > MAX_EVIDENCE:
        p.add("evidence", f"must have at most {MAX_EVIDENCE} items")
    strings = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            p.add(f"evidence[{i}]", "must be a string")
            continue
        if len(item) > MAX_TEXT:
            p.add(f"evidence[{i}]", f"must be at most {MAX_TEXT} characters")
        strings.append(item)
    return tuple(strings)


def _choices(value: Any, p: _Problems) -> tuple[Choice, ...]:
    if value is None:
        p.add("choices", "is required")
        return ()
    if not isinstance(value, list):
        p.add("choices", "must be an array of {id, label} objects")
        return ()
    if not 1 <= len(value) <= MAX_CHOICES:
        p.add("choices", f"must have 1 to {MAX_CHOICES} items")
    seen: set[str] = set()
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            p.add(f"choices[{i}]", "must be an object with id and label")
            continue
        prefix = f"choices[{i}]."
        p.unknown_fields(item, _CHOICE_FIELDS, prefix)
        cid = p.string(item, "id", prefix)
        label = p.string(item, "label", prefix)
        if cid is not None:
            if not _is_choice_id(cid):
                p.add(f"{prefix}id", "must match ^[A-Za-z0-9_.:-]{1,64}$")
            elif cid in seen:
                p.add(f"{prefix}id", "duplicate choice id")
            seen.add(cid)
        if cid is not None and label is not None:
            out.append(Choice(cid, label))
    return tuple(out)


def _response_fields(value: Any, p: _Problems) -> tuple[ResponseField, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        p.add("responseFields", "must be an array")
        return ()
    names: set[str] = set()
    out: list[ResponseField] = []
    for i, item in enumerate(value):
        path = f"responseFields[{i}]"
        if not isinstance(item, dict):
            p.add(path, "must be an object")
            continue
        kind = item.get("type")
        built: ResponseField | None
        if kind == "number":
            built = _number_field(item, path, p)
        elif kind == "select":
            built = _select_field(item, path, p)
        else:
            p.add(f"{path}.type", "must be 'number' or 'select'")
            continue
        name = item.get("name")
        if isinstance(name, str):
            if name in names:
                p.add(f"{path}.name", "duplicate field name")
            names.add(name)
        if built is not None:
            out.append(built)
    return tuple(out)


def _number_field(item: dict[str, Any], path: str, p: _Problems) -> NumberField | None:
    p.unknown_fields(item, _NUMBER_FIELD_FIELDS, f"{path}.")
    name = p.string(item, "name", f"{path}.")
    label = p.string(item, "label", f"{path}.")
    lo, step = item.get("min"), item.get("step")
    ok = True
    if lo is not None and not is_number(lo):
        p.add(f"{path}.min", "must be a number")
        ok = False
    if step is not None and (not is_number(step) or step <= 0):
        p.add(f"{path}.step", "must be a number greater than 0")
        ok = False
    if name is None or label is None or not ok:
        return None
    return NumberField(name=name, label=label, min=lo, step=step)


def _select_field(item: dict[str, Any], path: str, p: _Problems) -> SelectField | None:
    p.unknown_fields(item, _SELECT_FIELD_FIELDS, f"{path}.")
    name = p.string(item, "name", f"{path}.")
    label = p.string(item, "label", f"{path}.")
    options = item.get("options")
    if not isinstance(options, list) or not options:
        p.add(f"{path}.options", "must be a non-empty array of {value, label}")
        return None
    values: set[str] = set()
    built = []
    for j, opt in enumerate(options):
        opath = f"{path}.options[{j}]"
        if not isinstance(opt, dict):
            p.add(opath, "must be an object with value and label")
            continue
        p.unknown_fields(opt, _OPTION_FIELDS, f"{opath}.")
        value = p.string(opt, "value", f"{opath}.")
        olabel = p.string(opt, "label", f"{opath}.")
        if value is not None and value in values:
            p.add(f"{opath}.value", "duplicate option value")
        if value is not None:
            values.add(value)
        if value is not None and olabel is not None:
            built.append(SelectOption(value=value, label=olabel))
    if name is None or label is None or len(built) != len(options):
        return None
    return SelectField(name=name, label=label, options=tuple(built))


def _resume(value: Any, p: _Problems, check_url: Callable[[str], str | None] | None) -> Resume | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        p.add("resume", "must be an object with mode, url and optional secret")
        return None
    p.unknown_fields(value, _RESUME_FIELDS, "resume.")
    mode = value.get("mode", "webhook")
    if mode != "webhook":
        p.add("resume.mode", "must be 'webhook'")
    url = p.string(value, "url", "resume.")
    if url is not None:
        problem = url_problem(url) or (check_url(url) if check_url else None)
        if problem:
            p.add("resume.url", problem)
            url = None
    secret = p.string(value, "secret", "resume.", required=False)
    if url is None or mode != "webhook":
        return None
    return Resume(url, mode, secret)


def url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)  # the stdlib caches this per URL
    except ValueError:
        return NOT_A_URL
    if parts.scheme not in ("http", "https"):
        return NOT_A_URL
    return _authority_problem(parts.netloc)


@functools.lru_cache(maxsize=1024)
def _authority_problem(netloc: str) -> str | None:
    """A bad port or no host. Cached: agents call back to a few hosts, and
    ``.port`` and ``.hostname`` re-parse the authority on every access."""
    parts = SplitResult("http", netloc, "", "", "")
    try:
        _ = parts.port  # raises on a bad port
    except ValueError:
        return NOT_A_URL
    return None if parts.hostname else NOT_A_URL


def validate_decide(body: dict[str, Any], escalation: Escalation) -> DecideRequest:
    p = _Problems()
    p.unknown_fields(body, _DECIDE_FIELDS, "")
    choice = p.string(body, "choice")
    if choice is not None and choice not in {c.id for c in escalation.content.choices}:
        p.add("choice", "must be one of: " + ", ".join(c.id for c in escalation.content.choices))
    reason = p.string(body, "reason", required=False, nonempty=False)
    response = body.get("response")
    fields = escalation.content.response_fields
    if not fields:
        if response is not None:
            p.add("response", "must be absent: this escalation has no response fields")
    elif response is None:
        p.add("response", "is required: " + ", ".join(f.name for f in fields))
    elif not isinstance(response, dict):
        p.add("response", "must be an object")
    else:
        _check_response(response, fields, p)
    p.raise_if_any()
    assert choice is not None  # raise_if_any refused a missing choice
    return DecideRequest(choice=choice, reason=reason, response=response if fields else None)


def _check_response(response: dict[str, Any], fields: tuple[ResponseField, ...], p: _Problems) -> None:
    names = {f.name for f in fields}
    for extra in sorted(set(response) - names):
        p.add(f"response.{extra}", "unknown field")
    for f in fields:
        path = f"response.{f.name}"
        if f.name not in response:
            p.add(path, "is required")
            continue
        value = response[f.name]
        if isinstance(f, NumberField):
            problem = number_problem(value, f)
        else:
            allowed = [o.value for o in f.options]
            problem = None if isinstance(value, str) and value in allowed else "must be one of: " + ", ".join(allowed)
        if problem:
            p.add(path, problem)


def number_problem(value: Any, field: NumberField) -> str | None:
    """Why ``value`` is not acceptable for ``field``, or None. Shared with the TUI."""
    if not is_number(value):
        return "must be a number"
    if field.min is not None and value < field.min:
        return f"must be at least {field.min:g}"
    if field.step is not None:
        base = field.min if field.min is not None else 0
        steps = (value - base) / field.step
        # A huge value over a small step overflows to inf, which round() refuses.
        if not math.isfinite(steps) or abs(steps - round(steps)) > 1e-9 * max(1.0, abs(steps)):
            return f"must be on the step grid of {field.step:g} from {base:g}"
    return None


def validate_cancel(body: dict[str, Any]) -> str | None:
    p = _Problems()
    p.unknown_fields(body, _CANCEL_FIELDS, "")
    reason = p.string(body, "reason", required=False, nonempty=False)
    p.raise_if_any()
    return reason
