"""Reviewer operations (CONTRACT §15): claiming and assigning escalations,
and remembered decisions (rules), for the API, the web app and the TUI alike.

A claim is advisory: it names who works on an escalation, and everyone it
is routed to still sees and may decide it. A rule is a reviewer's decision
made in advance: ``answer_new`` asks the active rules of a new
escalation's policy and the newest that applies decides it, through
``Service.decide_by_rule`` (the one resolve path, compare-and-set).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from escalated.domain.models import ACTIVE_STATUSES, EVENT_DECIDED, Escalation, Policy, Principal, Resolution, RuleRef
from escalated.domain.rules import Rule, RuleRequest, parse_rule_request
from escalated.domain.scopes import ROLE_SCOPES
from escalated.domain.ids import new_id
from escalated.errors import InvalidState, NotFound, UserTokenRequired, ValidationFailed, field_error
from escalated.core.creation import routes_for
from escalated.core.serviceparts import ServiceParts

if TYPE_CHECKING:
    from escalated.core.service import Service

EVENT_CLAIMED = "escalation.claimed"
EVENT_ASSIGNED = "escalation.assigned"


class RuleDecisions(ServiceParts):
    """Mixed into ``Service``: a rule's decision goes the one resolve path
    (its ``store``, ``_callback``, ``_resolved``), and a claim's change is
    published as every other (``_publish``)."""

    async def decide_by_rule(self, esc: Escalation, rule: Rule) -> Escalation | None:
        """A remembered decision answers a new escalation, as the human who
        made the rule (CONTRACT §15); None when someone decided first."""
        resolution = Resolution(
            choice=rule.choice,
            resolved_by="human",
            answered_by=f"rule:{rule.id}",
            answered_at_ms=self.clock(),
            reason=rule.reason,
            rule=RuleRef(id=rule.id, created_by=rule.created_by),
        )
        callback = self._callback(esc, resolution, EVENT_DECIDED)
        try:
            await self.store.resolve_by_rule(escalation_id=esc.id, resolution=resolution, callback=callback, rule_id=rule.id)
        except InvalidState:
            return None
        return self._resolved(esc, resolution, EVENT_DECIDED)

    def announce(self, event: str, esc: Escalation, at_ms: int) -> None:
        """A committed change made by ``ReviewerOps`` (a claim): to the bus."""
        self._publish(event, esc, at_ms)


class ReviewerOps:
    def __init__(self, service: Service) -> None:
        self._service = service
        self._store = service.store

    # -- claim and assign ----------------------------------------------------------

    async def claim(self, principal: Principal, esc: Escalation) -> Escalation:
        """The caller becomes the assignee, and acknowledges it if open (a user only)."""
        if principal.kind != "user":
            raise UserTokenRequired("claiming names a person: use a user token (an API key is no one to assign)")
        return await self._assign(principal, esc, assignee=principal.actor, event=EVENT_CLAIMED, acknowledge=True)

    async def assign(self, principal: Principal, esc: Escalation, body: dict[str, Any]) -> Escalation:
        """``{"user": NAME}``: a user of the workspace the escalation is routed to; ``null`` unassigns."""
        problems = [field_error(name, "unknown field") for name in sorted(set(body) - {"user"})]
        name = body.get("user", ...)
        if name is ...:
            problems.append(field_error("user", "is required (a user's name, or null to unassign)"))
        elif name is not None and not (isinstance(name, str) and await self._routed_user(esc, name)):
            problems.append(field_error("user", "must name a user this escalation is routed to"))
        if problems:
            raise ValidationFailed(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}", errors=problems)
        return await self._assign(principal, esc, assignee=name, event=EVENT_ASSIGNED, acknowledge=False)

    async def _routed_user(self, esc: Escalation, name: str) -> bool:
        users = {u.name: u for u in await self._store.users(workspace_id=esc.workspace_id)}
        user = users.get(name)
        if user is None:
            return False
        as_user = Principal(
            kind="user", id=user.id, name=user.name, workspace_id=user.workspace_id,
            scopes=ROLE_SCOPES.get(user.role, frozenset()), groups=user.groups, role=user.role,
        )  # fmt: skip
        return await self._service.can_see(as_user, esc)

    async def _assign(
        self, principal: Principal, esc: Escalation, *, assignee: str | None, event: str, acknowledge: bool
    ) -> Escalation:
        at_ms = self._service.clock()
        acknowledged = await self._store.assign(
            escalation_id=esc.id, assignee=assignee, by=principal.actor, event=event.removeprefix("escalation."),
            acknowledge=acknowledge, at_ms=at_ms,
        )  # fmt: skip
        esc = await self._service.get(principal, esc.id)  # as committed: the history holds both entries
        if acknowledged:
            self._service.announce("escalation.acknowledged", esc, at_ms)
        self._service.announce(event, esc, at_ms)
        return esc

    # -- remembered decisions --------------------------------------------------------

    async def create_rule(self, principal: Principal, body: dict[str, Any]) -> Rule:
        request = parse_rule_request(body)
        policy = await self._service.policy(principal.workspace_id, request.policy)
        if not self._routed_policy(principal, policy):
            raise ValidationFailed(
                f"policy {policy.key} is not routed to you",
                errors=[field_error("policy", "must be a policy routed to you")],
            )
        _refuse_quorum_choice(request, policy)
        at_ms = self._service.clock()
        rule = Rule(
            id=new_id("rul"), workspace_id=principal.workspace_id, policy=request.policy, choice=request.choice,
            match=request.match, reason=request.reason, created_by=principal.actor, created_ms=at_ms,
            expires_ms=at_ms + int(request.lifetime_s * 1000),
        )  # fmt: skip
        await self._store.add_rule(rule=rule)
        return rule

    async def rules(self, principal: Principal) -> list[Rule]:
        """Every rule of the policies the caller is routed to, revoked and expired ones too."""
        found = await self._store.rules(workspace_id=principal.workspace_id)
        if principal.routes is None:
            return found
        visible = {}
        for key in {r.policy for r in found}:
            policy = await self._store.policy(workspace_id=principal.workspace_id, key=key)
            visible[key] = policy is not None and self._routed_policy(principal, policy)
        return [r for r in found if visible[r.policy]]

    async def rule(self, principal: Principal, rule_id: str) -> Rule:
        found = await self._store.rule(rule_id=rule_id, workspace_id=principal.workspace_id)
        if found is None or (principal.routes is not None and not await self._sees_rule(principal, found)):
            raise NotFound(f"no rule {rule_id}")
        return found

    async def revoke_rule(self, principal: Principal, rule_id: str) -> None:
        """Idempotent: the first revocation (who, when) is kept."""
        await self.rule(principal, rule_id)
        await self._store.revoke_rule(rule_id=rule_id, workspace_id=principal.workspace_id, by=principal.actor, at_ms=self._service.clock())

    async def _sees_rule(self, principal: Principal, rule: Rule) -> bool:
        policy = await self._store.policy(workspace_id=principal.workspace_id, key=rule.policy)
        return policy is not None and self._routed_policy(principal, policy)

    @staticmethod
    def _routed_policy(principal: Principal, policy: Policy) -> bool:
        return principal.routes is None or not set(routes_for(policy)).isdisjoint(principal.routes)

    def answer_new(self, esc: Escalation, policy: Policy) -> Coroutine[Any, Any, Escalation | None] | None:
        """After a create committed: the newest active rule that applies decides it (``_answer``'s
        coroutine itself, awaited by the caller: one layer less on every create). None, nothing
        to await, when the store's kept rules say the policy has no active one."""
        at_ms = self._service.clock()
        if self._store.kept_no_rules(workspace_id=esc.workspace_id, policy=esc.policy, at_ms=at_ms):
            return None
        return self._answer(esc, policy, at_ms=at_ms)

    async def _answer(self, esc: Escalation, policy: Policy, *, at_ms: int) -> Escalation | None:
        """The newest rule active at ``at_ms`` (and made by then) that applies decides ``esc``."""
        candidates = await self._store.active_rules(workspace_id=esc.workspace_id, policy=esc.policy, at_ms=at_ms)
        quorum_choices = quorum_choices_of(policy)
        for rule in candidates:
            if rule.created_ms <= at_ms and rule.applies(esc, at_ms=at_ms, quorum_choices=quorum_choices):
                return await self._service.decide_by_rule(esc, rule)
        return None

    async def answer_missed(self, *, since_ms: int, before_ms: int, limit: int) -> tuple[int, int | None]:
        """Decide, by the rules active when they were created, the live
        escalations created in [since, before] that ``answer_new`` never
        answered: a process killed between a create's commit and its rule's
        decision leaves them (the SLA clock's leader calls this). A rule
        revoked since decides nothing: the human took it back. Exactly once
        whoever runs it: ``decide_by_rule`` is a compare-and-set.

        Returns (how many were decided, the creation time of the last one
        read when the batch was full, to read on from; else None)."""
        found = await self._store.unanswered_by_rules(since_ms=since_ms, before_ms=before_ms, limit=limit)
        decided = 0
        for _, escalation_id in found:
            esc = await self._service.escalation_for_integration(escalation_id)
            if esc is None or esc.status not in ACTIVE_STATUSES:
                continue
            policy = await self._store.policy(workspace_id=esc.workspace_id, key=esc.policy)
            if policy is None:  # deleted since: its quorum, which no rule may answer, is unknown
                continue
            decided += await self._answer(esc, policy, at_ms=esc.created_ms) is not None
        return decided, found[-1][0] if len(found) == limit else None


def quorum_choices_of(policy: Policy) -> tuple[str, ...]:
    """The choices a rule may never make for this policy (quorum: §15)."""
    return policy.review.quorum_choices if policy.review.quorum > 1 else ()


def _refuse_quorum_choice(request: RuleRequest, policy: Policy) -> None:
    if request.choice in quorum_choices_of(policy):
        raise ValidationFailed(
            f"{request.choice!r} needs a quorum under policy {policy.key}: a rule is one person's decision",
            errors=[field_error("choice", "needs several approvals (a quorum), so it cannot be decided in advance")],
        )
