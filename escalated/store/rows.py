"""Rows become domain objects here, and only here.

The column order of each converter is the matching column list in
``sql/sqlite.sql`` (``escalation_columns``, ``delivery_columns``, ...).
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
import orjson

from escalated.domain.convert import content_from_json, content_to_json, converter
from escalated.domain.models import (
    NO_REVIEW,
    ApiKeyInfo,
    Approval,
    Attempt,
    Cancellation,
    DecisionLink,
    Delivery,
    Escalation,
    HistoryEntry,
    Policy,
    Resolution,
    Resume,
    ReviewRules,
    UserInfo,
    Workspace,
)
from escalated.domain.records import IdempotencyRecord, Replay
from escalated.domain.rules import Rule, RuleMatch, RuleUse
from escalated.store import queries

# The columns of escalation_columns; the history array follows them.
ESCALATION_WIDTH = queries.load("sqlite")["escalation_columns"].count(",") + 1


def escalation_from_row(row: tuple[Any, ...], history: tuple[HistoryEntry, ...] = ()) -> Escalation:
    (eid, ws, status, policy, agent_id, run_id, content, url, secret, created_ms, created_by,
     deadline_ms, default_choice, ack_by, ack_ms, resolution, cancellation, assignee,
     review, level, approvals, remind_ms, nudge_ms) = row  # fmt: skip
    return Escalation(
        id=eid,
        workspace_id=ws,
        status=status,
        policy=policy,
        agent_id=agent_id,
        run_id=run_id,
        content=content_from_json(orjson.loads(content)),
        created_ms=created_ms,
        created_by=created_by,
        resume=Resume(url=url, secret=secret) if url else None,
        deadline_ms=deadline_ms,
        default_choice=default_choice,
        acknowledged_by=ack_by,
        acknowledged_ms=ack_ms,
        resolution=converter.structure(orjson.loads(resolution), Resolution) if resolution else None,
        cancellation=converter.structure(orjson.loads(cancellation), Cancellation) if cancellation else None,
        history=history,
        assignee=assignee,
        review=review_from_json(review),
        level=level,
        approvals=approvals_from_json(approvals),
        remind_ms=remind_ms,
        nudge_ms=nudge_ms,
    )


def escalation_with_history(row: tuple[Any, ...]) -> Escalation:
    """A row selected with ``escalation_with_history``."""
    entries = sorted(orjson.loads(row[ESCALATION_WIDTH]))
    history = tuple(HistoryEntry(event=event, by=by, at_ms=at_ms) for _, event, by, at_ms in entries)
    return escalation_from_row(row[:ESCALATION_WIDTH], _number_levels(history))


def _number_levels(history: tuple[HistoryEntry, ...]) -> tuple[HistoryEntry, ...]:
    """Levels are reached in order, one ``escalated`` entry each: the n-th is level n."""
    if not any(h.event == "escalated" for h in history):
        return history
    out, level = [], 0
    for entry in history:
        if entry.event == "escalated":
            level += 1
            entry = msgspec.structs.replace(entry, level=level)
        out.append(entry)
    return tuple(out)


def delivery_from_row(row: tuple[Any, ...]) -> Delivery:
    did, eid, kind, target, event, status, body, secret, attempts, next_ms, created_ms = row
    return Delivery(
        id=did,
        escalation_id=eid,
        kind=kind,
        target=target,
        event=event,
        status=status,
        body=bytes(body),
        secret=secret,
        attempts=tuple(converter.structure(a, Attempt) for a in orjson.loads(attempts)),
        next_attempt_ms=next_ms,
        created_ms=created_ms,
    )


def replay_from_row(row: tuple[Any, ...]) -> Replay:
    return Replay(body_sha256=row[0], status=row[1], response_json=bytes(row[2]))


def workspace_from_row(row: tuple[Any, ...]) -> Workspace:
    return Workspace(*row)


# The key, user and policy rows are read on every request (a change from the
# CLI applies to the very next one); turning them into objects is cached by
# the row's exact contents.
@functools.lru_cache(maxsize=1024)
def key_from_row(row: tuple[Any, ...]) -> ApiKeyInfo:
    kid, ws, name, scopes, created, expires, revoked = row
    return ApiKeyInfo(
        id=kid,
        workspace_id=ws,
        name=name,
        scopes=frozenset(scopes.split()),
        created_ms=created,
        expires_ms=expires,
        revoked_ms=revoked,
    )


@functools.lru_cache(maxsize=1024)
def user_from_row(row: tuple[Any, ...]) -> UserInfo:
    uid, ws, name, role, groups, created, email, slack_id = row
    return UserInfo(
        id=uid,
        workspace_id=ws,
        name=name,
        role=role,
        groups=tuple(orjson.loads(groups)),
        created_ms=created,
        email=email,
        slack_id=slack_id,
    )


@functools.lru_cache(maxsize=4096)
def policy_from_row(row: tuple[Any, ...]) -> Policy:
    ws, key, reviewers, notify, sla_s, default_choice, cancel_callback, review = row
    return Policy(
        workspace_id=ws,
        key=key,
        reviewers=tuple(orjson.loads(reviewers)),
        notify=tuple(orjson.loads(notify)),
        sla_s=sla_s,
        default_choice=default_choice,
        cancel_callback=bool(cancel_callback),
        review=review_from_json(review),
    )


def decision_link_from_row(row: tuple[Any, ...]) -> DecisionLink:
    """A row of the ``decision_link`` query: the link's columns, then its user's."""
    escalation_id, choice, created_ms, expires_ms, used_ms, replaced_ms = row[:6]
    return DecisionLink(
        escalation_id=escalation_id,
        choice=choice,
        user=user_from_row(tuple(row[6:])),
        created_ms=created_ms,
        expires_ms=expires_ms,
        used_ms=used_ms,
        replaced_ms=replaced_ms,
    )


def rule_from_row(row: tuple[Any, ...]) -> Rule:
    """A row selected with ``rule_with_uses`` (or ``rule_columns`` and ``'[]'``)."""
    (rid, ws, policy, choice, agent_id, subject_type, subject_id, reason, created_by, created_ms,
     expires_ms, revoked_by, revoked_ms, uses) = row  # fmt: skip
    return Rule(
        id=rid,
        workspace_id=ws,
        policy=policy,
        choice=choice,
        match=RuleMatch(agent_id=agent_id, subject_type=subject_type, subject_id=subject_id),
        reason=reason,
        created_by=created_by,
        created_ms=created_ms,
        expires_ms=expires_ms,
        revoked_by=revoked_by,
        revoked_ms=revoked_ms,
        uses=tuple(sorted((RuleUse(escalation_id=e, at_ms=at) for e, at in orjson.loads(uses)), key=lambda u: u.at_ms)),
    )


def content_text(esc: Escalation, content_json: bytes | dict[str, Any] | None) -> str:
    """The content column's text: ``content_json`` as the core encoded
    (``content_bytes``) or converted it, or ``esc.content`` encoded here."""
    if isinstance(content_json, bytes):
        return content_json.decode()
    return orjson.dumps(content_json if content_json is not None else content_to_json(esc.content)).decode()


def escalation_params(esc: Escalation, *, content_json: bytes | dict[str, Any] | None) -> dict[str, Any]:
    """The values of ``create_escalation`` (``content_json``: see ``content_text``)."""
    resume = esc.resume
    return {
        "id": esc.id, "workspace_id": esc.workspace_id, "status": esc.status, "policy": esc.policy,
        "agent_id": esc.agent_id, "run_id": esc.run_id, "content_json": content_text(esc, content_json),
        "resume_url": resume.url if resume else None, "resume_secret": resume.secret if resume else None,
        "created_ms": esc.created_ms, "created_by": esc.created_by, "deadline_ms": esc.deadline_ms,
        "default_choice": esc.default_choice, "review_json": review_to_json(esc.review),
        "remind_ms": esc.remind_ms, "nudge_ms": esc.nudge_ms,
    }  # fmt: skip


def idempotency_params(idem: IdempotencyRecord, *, escalation_id: str, created_ms: int) -> dict[str, Any]:
    """The values of ``remember_idempotency_key`` (PostgreSQL adds its ``not_before_ms``)."""
    return {
        "workspace_id": idem.workspace_id, "key": idem.key, "body_sha256": idem.body_sha256, "status": idem.status,
        "response_json": idem.response_json, "escalation_id": escalation_id, "created_ms": created_ms,
    }  # fmt: skip


def delivery_params(d: Delivery) -> dict[str, Any]:
    """The values of ``add_delivery``."""
    return {
        "id": d.id, "escalation_id": d.escalation_id, "kind": d.kind, "target": d.target, "event": d.event,
        "status": d.status, "body": d.body, "secret": d.secret, "next_attempt_ms": d.next_attempt_ms,
        "created_ms": d.created_ms,
    }  # fmt: skip


def rule_params(rule: Rule) -> dict[str, Any]:
    """The values of ``add_rule`` (without the revocation)."""
    m = rule.match
    return {
        "id": rule.id, "workspace_id": rule.workspace_id, "policy": rule.policy, "choice": rule.choice,
        "agent_id": m.agent_id, "subject_type": m.subject_type, "subject_id": m.subject_id, "reason": rule.reason,
        "created_by": rule.created_by, "created_ms": rule.created_ms, "expires_ms": rule.expires_ms,
    }  # fmt: skip


def review_to_json(rules: ReviewRules) -> str | None:
    """NULL for no rules, so the many policies without them stay as they were."""
    return None if rules is NO_REVIEW or rules == NO_REVIEW else to_json_text(rules)


@functools.lru_cache(maxsize=1024)
def review_from_json(text: str | None) -> ReviewRules:
    return NO_REVIEW if text is None else converter.structure(orjson.loads(text), ReviewRules)


def approvals_from_json(text: str) -> tuple[Approval, ...]:
    return tuple(converter.structure(a, Approval) for a in orjson.loads(text)) if text != "[]" else ()


def approvals_to_json(approvals: tuple[Approval, ...]) -> str:
    return orjson.dumps([converter.unstructure(a) for a in approvals]).decode()


def to_json_text(value: object) -> str:
    return orjson.dumps(converter.unstructure(value)).decode()
