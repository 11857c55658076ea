"""One tool call as a reviewer sees it: the tool's name and its JSON arguments.

Every place that asks a human about a tool call (the framework adapters,
``guard_tool``) describes it here, the same way: ``subject.type`` is
``tool_call``, the evidence holds the tool's name and its arguments as JSON,
long values are cut, values under names that look like secrets are
redacted, and the whole stays inside the server's limits
(``domain/limits``), so a call is never refused for being long. Python
objects that are not JSON (a run context, a connection) are never shown by
their ``repr``: their type name stands in for them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from escalated.domain.limits import FILED_TEXT_BUDGET_CHARS, MAX_TEXT_CHARS

SUBJECT_TYPE = "tool_call"
APPROVE, REJECT = "approve", "reject"
CHOICES = ({"id": APPROVE, "label": "Approve"}, {"id": REJECT, "label": "Reject"})
REDACTED = "[redacted]"
MAX_IDEMPOTENCY_KEY_CHARS = 255

# Names whose values are credentials more often than not: api_key,
# password, client_secret, auth_token, session_cookie, private_key...
_SECRET_NAME = re.compile(
    r"pass(word|wd|phrase)?$|secret|token|api[_-]?key|apikey|auth|credential|private[_-]?key|cookie|signature",
    re.IGNORECASE,
)
# Values that are credentials whatever they are called: our own tokens,
# bearer headers, and the common key prefixes of the model providers.
_SECRET_VALUE = re.compile(r"^(ain_(live|user)_|Bearer\s|sk-|sk_live_|ghp_|xox[abp]-)", re.IGNORECASE)
# Cuts tried in turn until the arguments fit their share of the budget.
_VALUE_CUTS = (400, 120, 40)
_MAX_ITEMS = 50
_MAX_DEPTH = 6
_PREVIEW_CHARS = 160


@attrs.frozen(kw_only=True)
class ToolCall:
    """A tool call the model asked for: ``arguments`` is JSON text, a mapping, or None."""

    name: str
    call_id: str
    arguments: Any = None
    description: str | None = None


@attrs.frozen(kw_only=True)
class Described:
    """The parts of an escalation that describe the call (``create_escalation`` keywords)."""

    subject: dict[str, str]
    question: str
    evidence: list[str]
    choices: list[dict[str, str]]


def describe(call: ToolCall) -> Described:
    """The subject, question, evidence and choices for ``call``, within the server's limits."""
    name = _text(call.name, 200) or "tool"
    arguments = _arguments_json(call.arguments)
    evidence = [f"Tool: {name}", f"Arguments (JSON): {arguments}"]
    doing = _first_line(call.description)
    if doing:
        evidence.append(f"What it does: {_text(doing, 1000)}")
    preview = _cut(arguments, _PREVIEW_CHARS)
    question = f"Allow {name} with {preview}?" if arguments != "{}" else f"Allow {name}?"
    return Described(
        subject={"type": SUBJECT_TYPE, "id": _text(call.call_id, 500) or "call", "label": name},
        question=question,
        evidence=evidence,
        choices=[dict(c) for c in CHOICES],
    )


def idempotency_key(run_id: str, call_id: str) -> str:
    """``<runId>:<call id>``: a retried run files no second escalation for the same call.

    Past the header's 255 characters the key is a digest of the same text.
    """
    key = f"{run_id}:{call_id}"
    if len(key) > MAX_IDEMPOTENCY_KEY_CHARS:
        key = "sha256:" + hashlib.sha256(key.encode()).hexdigest()
    return key


def as_evidence_json(value: Any) -> str:
    """Any value as the JSON the reviewer reads: cut, redacted and named as the arguments are."""
    return _arguments_json(value)


def arguments_of(values: Mapping[str, Any]) -> dict[str, Any]:
    """Python keyword values as JSON-able arguments, run contexts left out.

    For wrappers that see a Python call rather than the model's JSON (``guard_tool``):
    a framework's context argument (``RunContextWrapper``, ``ToolContext``,
    Pydantic AI's ``RunContext``) is not something the model chose, and can hold
    anything, so it is not shown at all.
    """
    return {name: value for name, value in values.items() if not _is_context(value)}


def _is_context(value: Any) -> bool:
    # LangGraph's ToolRuntime carries the graph's state, context and config.
    return any(cls.__name__.endswith(("Context", "ContextWrapper", "ToolRuntime")) for cls in type(value).__mro__)


# -- arguments ------------------------------------------------------------------


def _arguments_json(arguments: Any) -> str:
    parsed = _parsed(arguments)
    share = FILED_TEXT_BUDGET_CHARS // 2
    for cut in _VALUE_CUTS:
        text = json.dumps(_shown(parsed, cut=cut, depth=0), ensure_ascii=False)
        if len(text) <= share:
            return text
    return _cut(text, share)


def _parsed(arguments: Any) -> Any:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, (str, bytes)):
        try:
            return json.loads(arguments)
        except ValueError:  # a model that sent broken JSON: shown as the text it sent
            return arguments if isinstance(arguments, str) else arguments.decode("utf-8", "replace")
    return arguments


def _shown(value: Any, *, cut: int, depth: int) -> Any:
    """``value`` as JSON a reviewer can read: long strings cut, secrets redacted, objects named."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return REDACTED if _SECRET_VALUE.match(value) else _cut(value, cut)
    if depth >= _MAX_DEPTH:
        return "…"
    if isinstance(value, Mapping):
        return _shown_mapping(value, cut=cut, depth=depth)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        shown = [_shown(v, cut=cut, depth=depth + 1) for v in items[:_MAX_ITEMS]]
        if len(items) > _MAX_ITEMS:
            shown.append(f"… {len(items) - _MAX_ITEMS} more items")
        return shown
    dumped = _plain(value)
    if dumped is not None:
        return _shown(dumped, cut=cut, depth=depth + 1)
    return f"<{type(value).__name__}>"  # never a repr: it may hold anything


def _shown_mapping(value: Mapping, *, cut: int, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (key, item) in enumerate(value.items()):
        if i == _MAX_ITEMS:
            out["…"] = f"{len(value) - _MAX_ITEMS} more keys"
            break
        name = _cut(str(key), 100)
        out[name] = REDACTED if _SECRET_NAME.search(name) else _shown(item, cut=cut, depth=depth + 1)
    return out


def _plain(value: Any) -> Any:
    """A pydantic model or a dataclass as plain data; None for anything else."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return dump(mode="json")
        except Exception:
            return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and not _is_context(value):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return None


# -- text -----------------------------------------------------------------------


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _text(value: Any, limit: int) -> str:
    """Free text for a field: no NUL (the server refuses it), within ``limit``."""
    text = str(value if value is not None else "").replace("\x00", "\ufffd").strip()
    return _cut(text, min(limit, MAX_TEXT_CHARS - 40))


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n", 1)[0].replace("\n", " ").strip()
