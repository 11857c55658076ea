"""Remembered decisions (CONTRACT §15): a reviewer's choice made in advance
for the escalations of one policy that match, until the rule expires.

The request is checked whole (every problem in one 422); ``applies`` is the
one answer to "does this rule decide that escalation", asked by the core
when an escalation is created.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from escalated.domain.models import Escalation
from escalated.domain.nul import NUL_MESSAGE, holds_nul
from escalated.errors import ConfigError, ValidationFailed, field_error
from escalated.timeutil import parse_duration_s

DEFAULT_LIFETIME_S = 24 * 3600
MAX_LIFETIME_S = 30 * 24 * 3600
MAX_REASON = 2000
MAX_MATCH_VALUE = 200
_POLICY_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")
_CHOICE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_FIELDS = frozenset({"policy", "choice", "match", "expiresIn", "reason"})
# JSON name -> attribute of RuleMatch
_MATCH_FIELDS = {"agentId": "agent_id", "subjectType": "subject_type", "subjectId": "subject_id"}

ACTIVE, EXPIRED, REVOKED = "active", "expired", "revoked"


@attrs.frozen
class RuleMatch:
    """Which escalations of the policy the rule decides; an absent part matches any."""

    agent_id: str | None = None
    subject_type: str | None = None
    subject_id: str | None = None


@attrs.frozen
class RuleUse:
    escalation_id: str
    at_ms: int


@attrs.frozen
class Rule:
    id: str
    workspace_id: str
    policy: str
    choice: str
    match: RuleMatch
    reason: str
    created_by: str
    created_ms: int
    expires_ms: int
    revoked_by: str | None = None
    revoked_ms: int | None = None
    uses: tuple[RuleUse, ...] = ()

    def status(self, *, at_ms: int) -> str:
        if self.revoked_ms is not None:
            return REVOKED
        return ACTIVE if at_ms < self.expires_ms else EXPIRED

    def applies(self, esc: Escalation, *, at_ms: int, quorum_choices: tuple[str, ...] = ()) -> bool:
        """It is active, names the escalation's policy, matches it, and its
        choice alone answers it: one of its choices, no response fields asked
        (a rule holds no response), and not a quorum choice (a rule is one
        person's decision; a quorum asks for several)."""
        m = self.match
        return (
            self.status(at_ms=at_ms) == ACTIVE
            and esc.workspace_id == self.workspace_id
            and esc.policy == self.policy
            and m.agent_id in (None, esc.agent_id)
            and m.subject_type in (None, esc.content.subject.type)
            and m.subject_id in (None, esc.content.subject.id)
            and self.choice in {c.id for c in esc.content.choices}
            and not esc.content.response_fields
            and self.choice not in quorum_choices
        )


@attrs.frozen
class RuleRequest:
    policy: str
    choice: str
    match: RuleMatch
    reason: str
    lifetime_s: float


def parse_rule_request(body: dict[str, Any]) -> RuleRequest:
    """A ``POST /rules`` body, checked whole: every problem at once as a 422."""
    problems = [field_error(name, "unknown field") for name in sorted(set(body) - _FIELDS)]
    policy = _text(body, "policy", problems, pattern=_POLICY_KEY, hint="dotted lower-case words, e.g. refunds.large")
    choice = _text(body, "choice", problems, pattern=_CHOICE_ID, hint="a choice id (letters, digits, _.:-)")
    reason = _text(body, "reason", problems, limit=MAX_REASON)
    match = _match(body.get("match", {}), problems)
    lifetime_s = _lifetime(body.get("expiresIn"), problems)
    if problems:
        n = len(problems)
        raise ValidationFailed(f"{n} problem{'s' if n != 1 else ''}", errors=problems)
    return RuleRequest(policy=policy, choice=choice, match=match, reason=reason, lifetime_s=lifetime_s)


def _text(
    obj: dict[str, Any],
    name: str,
    problems: list[dict[str, str]],
    *,
    prefix: str = "",
    pattern: re.Pattern[str] | None = None,
    hint: str = "",
    limit: int = MAX_MATCH_VALUE,
) -> Any:
    value = obj.get(name)
    path = prefix + name
    if not isinstance(value, str) or not value.strip():
        problems.append(field_error(path, "is required" if value is None else "must be a non-empty string"))
    elif len(value) > limit:
        problems.append(field_error(path, f"must be at most {limit} characters"))
    elif holds_nul(value):
        problems.append(field_error(path, NUL_MESSAGE))
    elif pattern is not None and not pattern.match(value):
        problems.append(field_error(path, f"must be {hint}"))
    else:
        return value
    return None


def _match(value: Any, problems: list[dict[str, str]]) -> RuleMatch:
    if not isinstance(value, dict):
        problems.append(field_error("match", "must be an object"))
        return RuleMatch()
    problems += [field_error(f"match.{name}", "unknown field") for name in sorted(set(value) - set(_MATCH_FIELDS))]
    parts = {attr: _text(value, name, problems, prefix="match.") for name, attr in _MATCH_FIELDS.items() if name in value}
    return RuleMatch(**parts)


def _lifetime(value: Any, problems: list[dict[str, str]]) -> float:
    if value is None:
        return DEFAULT_LIFETIME_S
    try:
        if not isinstance(value, str):
            raise ConfigError("not a string")
        seconds = parse_duration_s(value)
    except ConfigError:
        problems.append(field_error("expiresIn", "must be a duration like 90s, 15m, 4h, 2d or PT15M"))
        return DEFAULT_LIFETIME_S
    if not 1 <= seconds <= MAX_LIFETIME_S:
        problems.append(field_error("expiresIn", "must be from 1s to 30d"))
    return seconds
