"""The JSON shapes clients see (CONTRACT §3, §5). ``resume.secret`` never appears."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from escalated.domain.convert import content_to_json
from escalated.domain.masking import masked_delivery
from escalated.domain.models import OPEN, Delivery, Escalation, HistoryEntry
from escalated.domain.rules import Rule
from escalated.timeutil import format_ms, format_opt


def escalation_resource(esc: Escalation, *, content_json: dict[str, Any] | None = None) -> dict[str, Any]:
    content = content_json if content_json is not None else content_to_json(esc.content)
    res = esc.resolution
    cancel = esc.cancellation
    return {
        "id": esc.id,
        "status": esc.status,
        "policy": esc.policy,
        "agentId": esc.agent_id,
        "runId": esc.run_id,
        "subject": content["subject"],
        "question": content["question"],
        "evidence": content["evidence"],
        "choices": content["choices"],
        "responseFields": content.get("responseFields", []),
        "resume": None
        if esc.resume is None
        else {"mode": esc.resume.mode, "url": esc.resume.url, "signed": esc.resume.secret is not None},
        "createdAt": format_ms(esc.created_ms),
        "deadlineAt": format_opt(esc.deadline_ms),
        "defaultChoice": esc.default_choice,
        "acknowledgedBy": esc.acknowledged_by,
        "acknowledgedAt": format_opt(esc.acknowledged_ms),
        "assignee": esc.assignee,
        "resolution": None
        if res is None
        else {
            "choice": res.choice,
            **({"response": res.response} if res.response is not None else {}),
            "reason": res.reason,
            "resolvedBy": res.resolved_by,
            "answeredBy": res.answered_by,
            "answeredAt": format_ms(res.answered_at_ms),
            **({"rule": {"id": res.rule.id, "createdBy": res.rule.created_by}} if res.rule is not None else {}),
        },
        "cancellation": None
        if cancel is None
        else {"reason": cancel.reason, "cancelledBy": cancel.cancelled_by, "cancelledAt": format_ms(cancel.cancelled_at_ms)},
        "level": esc.level,
        "approvals": [{"by": a.by, "choice": a.choice, "at": format_ms(a.at_ms)} for a in esc.approvals],
        "history": [_history_entry(h) for h in esc.history],
    }


class _Resume(msgspec.Struct, gc=False):
    mode: str
    url: str
    signed: bool


class _Entry(msgspec.Struct, gc=False):
    event: str
    by: str
    at: str


class _NewEscalation(msgspec.Struct, gc=False, rename="camel"):
    """A new escalation's resource (open, its one history entry, no response
    fields), in ``escalation_resource``'s order. msgspec writes Subject and
    Choice (attrs classes) field by field, and escapes text as orjson does,
    code point for code point."""

    id: str
    status: str
    policy: str
    agent_id: str
    run_id: str
    subject: Any
    question: str
    evidence: Any
    choices: Any
    response_fields: tuple[()]
    resume: _Resume | None
    created_at: str
    deadline_at: str | None
    default_choice: str | None
    acknowledged_by: None
    acknowledged_at: None
    assignee: None
    resolution: None
    cancellation: None
    level: int
    approvals: tuple[()]
    history: tuple[_Entry]


# The resource's keys in order: _NewEscalation's, checked here once.
_RESOURCE_KEYS = (
    "id", "status", "policy", "agentId", "runId", "subject", "question", "evidence", "choices", "responseFields",
    "resume", "createdAt", "deadlineAt", "defaultChoice", "acknowledgedBy", "acknowledgedAt", "assignee",
    "resolution", "cancellation", "level", "approvals", "history",
)  # fmt: skip
if tuple(f.encode_name for f in msgspec.structs.fields(_NewEscalation)) != _RESOURCE_KEYS:
    raise RuntimeError(f"_NewEscalation writes {[f.encode_name for f in msgspec.structs.fields(_NewEscalation)]}, not {_RESOURCE_KEYS}")
_encode = msgspec.json.Encoder().encode
_dumps = orjson.dumps


def escalation_json(esc: Escalation) -> bytes:
    """``orjson.dumps(escalation_resource(esc))``, byte for byte. A create
    answers every escalation it makes with it: one just created (open, its
    one history entry, no response fields) is written by msgspec from its
    parts without the resource's dict in between (a third of the cost); any
    other goes through the dict."""
    history = esc.history
    content = esc.content
    if not (
        esc.status == OPEN
        and len(history) == 1
        and esc.acknowledged_by is None
        and esc.acknowledged_ms is None
        and esc.assignee is None
        and esc.resolution is None
        and esc.cancellation is None
        and esc.level == 0
        and not esc.approvals
        and not content.response_fields
        and history[0].level is None
    ):
        return _dumps(escalation_resource(esc))
    first = history[0]
    resume = esc.resume
    deadline_ms = esc.deadline_ms
    created_at = format_ms(esc.created_ms)
    return _encode(_NewEscalation(
        esc.id, OPEN, esc.policy, esc.agent_id, esc.run_id, content.subject, content.question, content.evidence,
        content.choices, (), None if resume is None else _Resume(resume.mode, resume.url, resume.secret is not None),
        created_at, None if deadline_ms is None else format_ms(deadline_ms), esc.default_choice,
        None, None, None, None, None, 0, (),  # acknowledged by and at, assignee, resolution, cancellation, level, approvals
        (_Entry(first.event, first.by, created_at if first.at_ms == esc.created_ms else format_ms(first.at_ms)),),
    ))  # fmt: skip


def _history_entry(h: HistoryEntry) -> dict[str, Any]:
    entry: dict[str, Any] = {"event": h.event, "by": h.by, "at": format_ms(h.at_ms)}
    if h.level is not None:  # "escalated" (CONTRACT §15)
        entry["level"] = h.level
    return entry


def delivery_resource(d: Delivery) -> dict[str, Any]:
    """A notification's webhook or Slack URL masked (agents and reviewers read
    deliveries; such a URL is the credential to post to its channel)."""
    d = masked_delivery(d)
    return {
        "id": d.id,
        "kind": d.kind,
        "target": d.target,
        "event": d.event,
        "status": d.status,
        "attempts": [
            {"at": format_ms(a.at_ms), "statusCode": a.status_code, "error": a.error, "durationMs": a.duration_ms}
            for a in d.attempts
        ],
        "nextAttemptAt": format_opt(d.next_attempt_ms),
    }


def rule_resource(rule: Rule, *, at_ms: int) -> dict[str, Any]:
    """A remembered decision (CONTRACT §15): its author, its life and every use."""
    m = rule.match
    match = {"agentId": m.agent_id, "subjectType": m.subject_type, "subjectId": m.subject_id}
    return {
        "id": rule.id,
        "policy": rule.policy,
        "choice": rule.choice,
        "match": {k: v for k, v in match.items() if v is not None},
        "reason": rule.reason,
        "status": rule.status(at_ms=at_ms),
        "createdBy": rule.created_by,
        "createdAt": format_ms(rule.created_ms),
        "expiresAt": format_ms(rule.expires_ms),
        "revokedBy": rule.revoked_by,
        "revokedAt": format_opt(rule.revoked_ms),
        "uses": [{"escalationId": u.escalation_id, "at": format_ms(u.at_ms)} for u in rule.uses],
    }
