"""The inbox and one escalation: read, acknowledge, decide, cancel, redeliver.

Each handler reads the request, calls the service, renders a page. A form
that fails re-renders the escalation with the problem in words: 409 when
someone else got there first, 422 with the offending fields marked.
"""

from __future__ import annotations

import re

from aiohttp import web
from multidict import MultiDictProxy

from escalated.domain import scopes
from escalated.domain.masking import masked_delivery
from escalated.domain.models import Escalation, NumberField
from escalated.errors import InsufficientScope, InvalidState, ValidationFailed
from escalated.http.appkeys import SERVICE
from escalated.core.inbox import INBOX_SORTS, INBOX_STATUSES, InboxQuery
from escalated.core.weblinks import escalation_path
from escalated.web import remember, session
from escalated.web.render import page, see_other

_INTEGER = re.compile(r"^-?\d+$")


async def inbox(request: web.Request) -> web.Response:
    who = await session.signed_in(request)
    q = request.query
    status, sort = q.get("status", ""), q.get("sort", "")
    query = InboxQuery(
        status=status if status in INBOX_STATUSES else "active",
        policy=q.get("policy", "").strip(),
        text=q.get("q", "").strip(),
        sort=sort if sort in INBOX_SORTS else "deadline",
        mine=q.get("mine") == "1",
    )
    found = await request.config_dict[SERVICE].inbox(who.principal, query)
    return page(request, "inbox.html", {"inbox": found, "statuses": INBOX_STATUSES, "sorts": INBOX_SORTS})


async def detail(request: web.Request) -> web.Response:
    who = await session.signed_in(request)
    return await _detail_page(request, who.principal)


async def _detail_page(
    request: web.Request, principal, *, error: str | None = None, errors: dict | None = None, values=None, status=200
) -> web.Response:
    esc, deliveries = await request.config_dict[SERVICE].deliveries(principal, request.match_info["id"])
    context = {
        "esc": esc,
        "deliveries": [masked_delivery(d) for d in deliveries],  # webhook and Slack URLs masked
        "error": error,
        "errors": errors or {},
        "values": values or {},
        "can": principal.scopes,
        "scopes": scopes,
    }
    return page(request, "escalation.html", context, status=status)


def _need(principal, scope: str) -> None:
    if scope not in principal.scopes:
        raise InsufficientScope(f"your role cannot do this (it needs {scope})", scope=scope)


async def _act(request: web.Request, scope: str, action) -> web.Response:
    """Run one transition from a form; on a refusal, the page again with why."""
    data = await session.form(request)
    who = await session.signed_in(request)
    _need(who.principal, scope)
    service = request.config_dict[SERVICE]
    esc = await service.get(who.principal, request.match_info["id"])
    try:
        await action(service, who.principal, esc, data)
    except InvalidState as exc:
        return await _detail_page(request, who.principal, error=_too_late(exc), status=409)
    except ValidationFailed as exc:
        errors = {_form_field(e["field"]): e["message"] for e in exc.errors or ()}
        message = "Please correct the marked field" + ("s." if len(errors) != 1 else ".")
        return await _detail_page(request, who.principal, error=message, errors=errors, values=data, status=422)
    return see_other(escalation_path(esc.id))


def _too_late(exc: InvalidState) -> str:
    current = exc.extra.get("current_status")
    if current is None:
        return exc.detail
    return f"Someone else got there first: this escalation is already {current}. Nothing was changed."


def _form_field(path: str) -> str:
    return path.removeprefix("response.")


def decide_body(data: MultiDictProxy, esc: Escalation) -> dict:
    """The form as the API's decide body: numbers become numbers, blanks are left out."""
    body: dict = {"choice": data.get("choice", "")}
    if reason := str(data.get("reason", "")).strip():
        body["reason"] = reason
    if esc.content.response_fields:
        response = {}
        for field in esc.content.response_fields:
            raw = str(data.get(field.name, "")).strip()
            if raw:
                response[field.name] = _number(raw) if isinstance(field, NumberField) else raw
        body["response"] = response
    return body


def _number(raw: str) -> int | float | str:
    """A number when it reads as one; otherwise the text, which validation refuses in words."""
    if _INTEGER.match(raw):
        return int(raw)
    try:
        return float(raw)
    except ValueError:
        return raw


async def acknowledge(request: web.Request) -> web.Response:
    return await _act(request, scopes.ACKNOWLEDGE, lambda svc, who, esc, data: svc.acknowledge(who, esc))


async def decide(request: web.Request) -> web.Response:
    """Decide; with "remember" ticked, then remember the same decision for matching new escalations."""

    async def decide_and_remember(svc, who, esc, data):
        body = decide_body(data, esc)
        await svc.decide(who, esc, body)
        rule = remember.rule_body(data, esc, choice=body["choice"], reason=body.get("reason"))
        if rule is not None:
            try:
                await svc.reviewer_ops.create_rule(who, rule)
            except ValidationFailed as exc:  # the decision stands: say what was not remembered
                words = "; ".join(e["message"] for e in exc.errors or ()) or exc.detail
                message = f"Your decision is recorded, but not remembered: {words}"
                raise ValidationFailed(exc.detail, errors=[{"field": "remember", "message": message}]) from None

    return await _act(request, scopes.DECIDE, decide_and_remember)


async def claim(request: web.Request) -> web.Response:
    return await _act(request, scopes.ACKNOWLEDGE, lambda svc, who, esc, data: svc.reviewer_ops.claim(who, esc))


async def cancel(request: web.Request) -> web.Response:
    def body(data):
        reason = str(data.get("reason", "")).strip()
        return {"reason": reason} if reason else {}

    return await _act(request, scopes.CANCEL, lambda svc, who, esc, data: svc.cancel(who, esc, body(data)))


async def redeliver(request: web.Request) -> web.Response:
    async def requeue(service, principal, esc, data):
        await service.retry_delivery(principal, esc.id)  # wakes the sender itself

    return await _act(request, scopes.DECIDE, requeue)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/", inbox, allow_head=False)
    router.add_get("/escalations/{id}", detail, allow_head=False)
    router.add_post("/escalations/{id}/acknowledge", acknowledge)
    router.add_post("/escalations/{id}/decide", decide)
    router.add_post("/escalations/{id}/claim", claim)
    router.add_post("/escalations/{id}/cancel", cancel)
    router.add_post("/escalations/{id}/redeliver", redeliver)
