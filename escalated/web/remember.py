""""Remember for matching escalations" on the decide form (CONTRACT §15): the
form's choices, and the form as a ``POST /rules`` body for the core."""

from __future__ import annotations

from aiohttp import web
from multidict import MultiDictProxy

from escalated.domain import scopes
from escalated.domain.models import Escalation
from escalated.errors import InsufficientScope
from escalated.http.appkeys import SERVICE
from escalated.web import session
from escalated.web.render import page, see_other

# (form value, words); the value is the rule's expiresIn.
LIFETIMES = (("1h", "1 hour"), ("24h", "24 hours"), ("7d", "7 days"), ("30d", "30 days"))
DEFAULT_LIFETIME = "24h"


def matches(esc: Escalation) -> list[tuple[str, str]]:
    """(form value, words) of what a remembered decision may match, narrowest last."""
    subject = esc.content.subject
    return [
        ("agent-type", f"from {esc.agent_id} about any {subject.type}"),
        ("agent-subject", f"from {esc.agent_id} about {subject.label}"),
        ("policy", f"every escalation of {esc.policy}"),
    ]


def rule_body(data: MultiDictProxy, esc: Escalation, *, choice: str, reason: str | None) -> dict | None:
    """The rule the form asks for, or None when "remember" is not ticked."""
    if not data.get("remember"):
        return None
    subject = esc.content.subject
    match = {
        "agent-type": {"agentId": esc.agent_id, "subjectType": subject.type},
        "agent-subject": {"agentId": esc.agent_id, "subjectType": subject.type, "subjectId": subject.id},
        "policy": {},
    }.get(str(data.get("remember_match", "")), {"agentId": esc.agent_id, "subjectType": subject.type})
    lifetime = str(data.get("remember_for", DEFAULT_LIFETIME))
    return {
        "policy": esc.policy,
        "choice": choice,
        "match": match,
        "expiresIn": lifetime if lifetime in dict(LIFETIMES) else DEFAULT_LIFETIME,
        # A rule needs a reason; the decision's own, else where it was made.
        "reason": reason or f"remembered when deciding {esc.id}",
    }


GLOBALS = {"remember_matches": matches, "remember_lifetimes": LIFETIMES}


# -- the page of remembered decisions: every rule of the reviewer's policies ---


async def rules_page(request: web.Request) -> web.Response:
    who = await session.signed_in(request)
    _need_decide(who.principal)
    found = await request.config_dict[SERVICE].reviewer_ops.rules(who.principal)
    return page(request, "rules.html", {"rules": found})


async def revoke(request: web.Request) -> web.Response:
    await session.form(request)
    who = await session.signed_in(request)
    _need_decide(who.principal)
    await request.config_dict[SERVICE].reviewer_ops.revoke_rule(who.principal, request.match_info["id"])
    return see_other("/app/rules")


def _need_decide(principal) -> None:
    if scopes.DECIDE not in principal.scopes:
        raise InsufficientScope(f"your role cannot see remembered decisions (it needs {scopes.DECIDE})", scope=scopes.DECIDE)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/rules", rules_page, allow_head=False)
    router.add_post("/rules/{id}/revoke", revoke)
