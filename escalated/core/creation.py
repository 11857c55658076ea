"""What ``Service.create`` builds: the new escalation, where it is routed,
and the answer an Idempotency-Key stores and replays.

Plain functions, no I/O: ``Service.create`` calls them between its reads
and its one write.
"""

from __future__ import annotations

import attrs
import orjson

from escalated.domain.models import OPEN, Escalation, HistoryEntry, Policy, Principal
from escalated.domain.records import Replay
from escalated.domain.review import first_nudge
from escalated.domain.validation import CreateRequest
from escalated.errors import IdempotencyKeyReused
from escalated.domain.ids import new_id

IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000


@attrs.frozen
class Created:
    """What a create did. ``resource_json`` is the escalation as first
    answered, rendered once: an Idempotency-Key stores these bytes and a
    replay answers them again, whatever happened to the escalation since."""

    escalation_id: str
    resource_json: bytes
    replayed: bool
    escalation: Escalation | None = None  # None for a replay: the stored answer stands in


def routes_for(policy: Policy) -> tuple[str, ...]:
    if not policy.reviewers:
        return ("*",)
    return tuple(r if r.startswith("group:") else f"user:{r}" for r in policy.reviewers)


def new_escalation(principal: Principal, request: CreateRequest, policy: Policy, *, at_ms: int) -> Escalation:
    remind_ms, nudge_ms = first_nudge(policy.review, created_ms=at_ms)
    return Escalation(
        id=new_id("esc"),
        workspace_id=principal.workspace_id,
        status=OPEN,
        policy=policy.key,
        agent_id=request.agent_id,
        run_id=request.run_id,
        content=request.content,
        created_ms=at_ms,
        created_by=principal.actor,
        resume=request.resume,
        deadline_ms=at_ms + int(policy.sla_s * 1000) if policy.sla_s is not None else None,
        default_choice=policy.default_choice,
        history=(HistoryEntry(event="created", by=principal.actor, at_ms=at_ms),),
        review=policy.review,
        remind_ms=remind_ms,
        nudge_ms=nudge_ms,
    )


def replayed(replay: Replay, body_sha: str) -> Created:
    if replay.body_sha256 != body_sha:
        raise IdempotencyKeyReused("this Idempotency-Key was used with a different body")
    esc_id = orjson.loads(replay.response_json)["id"]
    return Created(escalation_id=esc_id, resource_json=replay.response_json, replayed=True)
