"""Value objects. Frozen; change them with ``attrs.evolve``, or
``msgspec.structs.replace`` for the six a create builds (Subject, Choice,
Resume, Content, HistoryEntry, Escalation), which are msgspec Structs: one
is built in a tenth of an attrs object's time (no Python ``__init__``).
Both compare and hash by their fields."""

from __future__ import annotations

from typing import Any

import attrs
import msgspec

# Status names (CONTRACT §3).
OPEN = "open"
ACKNOWLEDGED = "acknowledged"
RESOLVED = "resolved"
CANCELLED = "cancelled"
ACTIVE_STATUSES = (OPEN, ACKNOWLEDGED)
TERMINAL_STATUSES = (RESOLVED, CANCELLED)
STATUSES = (OPEN, ACKNOWLEDGED, RESOLVED, CANCELLED)

# Events, as they appear in history, on /events and in callback headers.
EVENT_CREATED = "escalation.created"
EVENT_ACKNOWLEDGED = "escalation.acknowledged"
EVENT_DECIDED = "escalation.decided"
EVENT_BREACHED = "escalation.breached"
EVENT_CANCELLED = "escalation.cancelled"
# Reviewer operations (CONTRACT §15): a quorum vote short of the quorum, a
# level reached (history and /events), and a reminder (notifications only).
EVENT_APPROVED = "escalation.approved"
EVENT_ESCALATED = "escalation.escalated"
EVENT_REMINDED = "escalation.reminded"


# Built on every create: a Struct (see the module's docstring). gc=False:
# such a value holds text, numbers and other values, never a cycle.
class Subject(msgspec.Struct, frozen=True, gc=False):
    type: str
    id: str
    label: str


class Choice(msgspec.Struct, frozen=True, gc=False):
    id: str
    label: str


@attrs.frozen
class NumberField:
    name: str
    label: str
    min: float | None = None
    step: float | None = None


@attrs.frozen
class SelectOption:
    value: str
    label: str


@attrs.frozen
class SelectField:
    name: str
    label: str
    options: tuple[SelectOption, ...]


ResponseField = NumberField | SelectField


class Resume(msgspec.Struct, frozen=True, gc=False):
    url: str
    mode: str = "webhook"
    secret: str | None = None

    def __repr__(self) -> str:  # never the secret
        return f"Resume(url={self.url!r}, mode={self.mode!r})"


class Content(msgspec.Struct, frozen=True, gc=False):
    """What the agent sent, validated. Never changes after creation."""

    subject: Subject
    question: str
    evidence: tuple[str, ...]
    choices: tuple[Choice, ...]
    response_fields: tuple[ResponseField, ...] = ()


@attrs.frozen
class RuleRef:
    """The remembered decision that answered an escalation, and who made it (CONTRACT §15)."""

    id: str
    created_by: str


@attrs.frozen
class Resolution:
    choice: str
    resolved_by: str  # "human" | "timeout"
    answered_by: str
    answered_at_ms: int
    reason: str | None = None
    response: dict[str, Any] | None = None
    rule: RuleRef | None = None  # answered by a remembered decision (answered_by "rule:<id>")


@attrs.frozen
class Cancellation:
    cancelled_by: str
    cancelled_at_ms: int
    reason: str | None = None


class HistoryEntry(msgspec.Struct, frozen=True, gc=False):
    # "created", "acknowledged", "claimed", "assigned", "approved", "escalated", "decided", "breached", "cancelled"
    event: str
    by: str
    at_ms: int
    level: int | None = None  # "escalated" only: the level reached (the n-th such entry is level n)


# -- reviewer operations (CONTRACT §15; the rules' logic is domain/review.py) ----


@attrs.frozen
class Level:
    """Still open ``after_s`` from creation: these reviewers join, these targets are notified."""

    after_s: float
    reviewers: tuple[str, ...]
    notify: tuple[str, ...] = ()


@attrs.frozen
class ReviewRules:
    remind_every_s: float | None = None
    levels: tuple[Level, ...] = ()
    quorum: int = 1
    quorum_choices: tuple[str, ...] = ()

    @property
    def clocked(self) -> bool:
        """Whether the SLA clock has anything to do for an escalation with these rules."""
        return self.remind_every_s is not None or bool(self.levels)

    def needs_quorum(self, choice: str) -> bool:
        return self.quorum > 1 and choice in self.quorum_choices


NO_REVIEW = ReviewRules()


@attrs.frozen
class Approval:
    """One user's vote for a quorum choice, before the quorum is reached."""

    by: str
    choice: str
    at_ms: int


class Escalation(msgspec.Struct, frozen=True, gc=False):
    id: str
    workspace_id: str
    status: str
    policy: str
    agent_id: str
    run_id: str
    content: Content
    created_ms: int
    created_by: str
    resume: Resume | None = None
    deadline_ms: int | None = None
    default_choice: str | None = None  # the policy's, fixed at creation
    acknowledged_by: str | None = None
    acknowledged_ms: int | None = None
    resolution: Resolution | None = None
    cancellation: Cancellation | None = None
    history: tuple[HistoryEntry, ...] = ()
    assignee: str | None = None  # who claimed it or was assigned it (advisory, CONTRACT §15)
    # Reviewer operations (CONTRACT §15), the rules copied from the policy at creation.
    review: ReviewRules = NO_REVIEW
    level: int = 0  # the highest escalation level reached
    approvals: tuple[Approval, ...] = ()
    remind_ms: int | None = None  # the next reminder, while open
    nudge_ms: int | None = None  # the next reminder or level, whichever is first (the clock's index)


@attrs.frozen
class Policy:
    workspace_id: str
    key: str
    reviewers: tuple[str, ...] = ()
    notify: tuple[str, ...] = ()
    sla_s: float | None = None
    default_choice: str | None = None
    # Cancelling sends a signed escalation.cancelled callback (off by default:
    # the seed's rule is that cancellation sends none).
    cancel_callback: bool = False
    review: ReviewRules = NO_REVIEW  # reminders, levels, quorum (CONTRACT §15)


# Every database has it: created by the first migration, never removed.
DEFAULT_WORKSPACE = "default"


@attrs.frozen
class Workspace:
    id: str
    name: str


@attrs.frozen
class Principal:
    """Who is calling: an API key or a user, always inside one workspace."""

    kind: str  # "key" | "user" | "operator" (the CLI, core/principals.py)
    id: str
    name: str | None
    workspace_id: str
    scopes: frozenset[str]
    groups: tuple[str, ...] = ()
    role: str | None = None
    expires_ms: int | None = None  # an API key's expiry; what it mints never outlives it

    def expiry_of_minted_key(self, requested_ms: int | None) -> int | None:
        """A key this principal mints never outlives it: otherwise a key about
        to expire could keep its power forever through a child. User tokens
        have no expiry (and web sessions only an idle timeout), so for them
        the request stands."""
        if self.expires_ms is None:
            return requested_ms
        return self.expires_ms if requested_ms is None else min(requested_ms, self.expires_ms)

    @property
    def actor(self) -> str:
        """The ``by`` / ``answeredBy`` text (CONTRACT §3)."""
        if self.kind == "user":
            return self.name or self.id
        return f"key:{self.name or self.id}"

    @property
    def routes(self) -> tuple[str, ...] | None:
        """Route names this principal is reachable by; None = sees everything."""
        if self.kind != "user":
            return None
        return ("*", f"user:{self.name}", *(f"group:{g}" for g in self.groups))


@attrs.frozen
class ApiKeyInfo:
    id: str
    workspace_id: str
    name: str | None
    scopes: frozenset[str]
    created_ms: int
    expires_ms: int | None = None
    revoked_ms: int | None = None


@attrs.frozen
class UserInfo:
    id: str
    workspace_id: str
    name: str
    role: str
    groups: tuple[str, ...]
    created_ms: int
    email: str | None = None  # lower-cased (domain/contacts.py); unique per workspace
    slack_id: str | None = None  # Slack member id (U…); unique per workspace


# Delivery kinds and statuses (CONTRACT §5).
CALLBACK = "callback"
NOTIFICATION = "notification"
PENDING = "pending"
DELIVERED = "delivered"
FAILED = "failed"


@attrs.frozen
class Attempt:
    at_ms: int
    duration_ms: int
    status_code: int | None = None
    error: str | None = None


@attrs.frozen
class Delivery:
    """One outbox row: a callback or a notification, with its exact bytes."""

    id: str
    escalation_id: str
    kind: str
    target: str
    event: str
    body: bytes = attrs.field(repr=False)
    status: str = PENDING
    secret: str | None = attrs.field(default=None, repr=False)
    attempts: tuple[Attempt, ...] = ()
    next_attempt_ms: int | None = None
    created_ms: int = 0


@attrs.frozen
class NewDecisionLink:
    """An email decision link as stored: the hash of its secret, never the secret."""

    secret_hash: str
    escalation_id: str
    user_id: str
    choice: str
    expires_ms: int


@attrs.frozen
class DecisionLink:
    """A stored decision link and the user it decides as (issue #16)."""

    escalation_id: str
    choice: str
    user: UserInfo
    created_ms: int
    expires_ms: int
    used_ms: int | None = None
    replaced_ms: int | None = None  # a later attempt of the same email minted new links
