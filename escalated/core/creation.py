"""What ``Service.create`` builds and answers: the new escalation, where it
is routed, and what an Idempotency-Key remembers of it.

Plain functions, no I/O: ``Service.create`` calls them between its reads
and its one write. The core does not know what its caller answers a create
(HTTP's 201 and body, say): a keyed create brings its caller's ``answer``,
which the core stores with the escalation, in the same transaction, and
hands back on a replay.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import msgspec

from escalated.domain.models import OPEN, Escalation, HistoryEntry, Policy, Principal
from escalated.domain.records import Replay
from escalated.domain.review import first_nudge
from escalated.domain.validation import CreateRequest
from escalated.errors import IdempotencyKeyReused
from escalated.domain.ids import new_id

IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000


@attrs.frozen
class Answer:
    """What a caller answered a create, as it will answer a replay of it."""

    status: int
    body: bytes


@attrs.frozen
class Idempotency:
    """A create's Idempotency-Key, and how its caller answers the escalation
    created: that answer is remembered with the key."""

    key: str
    answer: Callable[[Escalation], Answer]


# Built on every create: a Struct, as the escalation it carries (domain/models.py).
class Created(msgspec.Struct, frozen=True, gc=False):
    """A new escalation, as created (``open``). ``answer`` is the caller's
    answer remembered with its Idempotency-Key, when it gave one."""

    escalation: Escalation
    answer: Answer | None = None


@attrs.frozen
class Replayed:
    """A repeat of an earlier create (same key, same body): its answer then,
    whatever happened to the escalation since."""

    answer: Answer


def routes_for(policy: Policy) -> tuple[str, ...]:
    if not policy.reviewers:
        return ("*",)
    return tuple(r if r.startswith("group:") else f"user:{r}" for r in policy.reviewers)


# The order new_escalation passes an Escalation's fields in: by position, as
# keywords cost ~8,000 instructions more on every create. Checked here, once.
_ESCALATION_FIELDS = (
    "id", "workspace_id", "status", "policy", "agent_id", "run_id", "content", "created_ms", "created_by", "resume",
    "deadline_ms", "default_choice", "acknowledged_by", "acknowledged_ms", "resolution", "cancellation", "history",
    "assignee", "review", "level", "approvals", "remind_ms", "nudge_ms",
)  # fmt: skip
if Escalation.__struct_fields__ != _ESCALATION_FIELDS:
    raise RuntimeError(f"Escalation's fields are {Escalation.__struct_fields__}, not {_ESCALATION_FIELDS}")


def new_escalation(principal: Principal, request: CreateRequest, policy: Policy, *, at_ms: int) -> Escalation:
    remind_ms, nudge_ms = first_nudge(policy.review, created_ms=at_ms)
    actor = principal.actor
    sla_s = policy.sla_s
    return Escalation(
        new_id("esc"), principal.workspace_id, OPEN, policy.key, request.agent_id, request.run_id, request.content,
        at_ms, actor, request.resume, at_ms + int(sla_s * 1000) if sla_s is not None else None, policy.default_choice,
        None, None, None, None,  # acknowledged_by, acknowledged_ms, resolution, cancellation
        (HistoryEntry("created", actor, at_ms),),  # (event, by, at_ms): no keywords' dict
        None, policy.review, 0, (), remind_ms, nudge_ms,  # assignee, review, level, approvals, remind_ms, nudge_ms
    )  # fmt: skip


def replayed(replay: Replay, body_sha: str) -> Replayed:
    if replay.body_sha256 != body_sha:
        raise IdempotencyKeyReused("this Idempotency-Key was used with a different body")
    return Replayed(Answer(status=replay.status, body=replay.response_json))
