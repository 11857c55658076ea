"""Escalation routes (CONTRACT §3). Handlers are thin: auth, read, call the service, render."""

from __future__ import annotations


import orjson
from aiohttp import web

from escalated.core.creation import Answer, Idempotency, Replayed
from escalated.domain import scopes
from escalated.domain.ids import ESCALATION_ID
from escalated.domain.models import STATUSES, Escalation
from escalated.domain.records import ListQuery
from escalated.domain.resource import escalation_json, escalation_resource
from escalated.errors import ValidationFailed, field_error
from escalated.http.appkeys import SERVICE
from escalated.http.auth import require, require_known
from escalated.http.body import json_object, read_json, read_json_bytes

MAX_PAGE = 200
LIST_PARAMETERS = ("status", "policy", "agentId", "runId", "assignee", "limit", "cursor", "order")
DEFAULT_PAGE = 50
MAX_IDEMPOTENCY_KEY = 255


def json_response(data, *, status: int = 200, headers: dict | None = None) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(data), content_type="application/json", headers=headers)


def created_answer(esc: Escalation) -> Answer:
    """A create's answer, 201 and the escalation as created: what an
    Idempotency-Key remembers, for this API and the MCP server alike (they
    share keys, so they answer a create the same way)."""
    return Answer(status=201, body=escalation_json(esc))


async def create(request: web.Request) -> web.Response:
    principal = require_known(request, scopes.WRITE) or await require(request, scopes.WRITE)
    service = request.app[SERVICE]
    raw = await read_json_bytes(request)
    key = request.headers.get("Idempotency-Key")
    # The usual body, valid, read once by the typed decoder; any other is
    # parsed and validated as always, which writes its 400 or 422.
    valid = service.valid_create(raw)
    body = json_object(raw) if valid is None or key is not None else None
    # Printable ASCII only: other header bytes arrive as surrogates that SQLite cannot store.
    if key is not None and not (1 <= len(key) <= MAX_IDEMPOTENCY_KEY and key.isascii() and key.isprintable()):
        raise ValidationFailed(
            "invalid Idempotency-Key",
            errors=[field_error("Idempotency-Key", "must be 1 to 255 printable ASCII characters")],
        )
    idempotency = Idempotency(key, answer=created_answer) if key is not None else None
    outcome = await service.create(principal, body, idempotency=idempotency, valid=valid)
    if isinstance(outcome, Replayed):  # the first answer, byte for byte
        answer = outcome.answer
        headers = {"Location": f"/escalations/{orjson.loads(answer.body)['id']}", "Idempotent-Replayed": "true"}
        return web.Response(status=answer.status, body=answer.body, content_type="application/json", headers=headers)
    esc = outcome.escalation
    # The answer remembered with the key, or the same 201 written now.
    answer_body = outcome.answer.body if outcome.answer else escalation_json(esc)
    return web.Response(
        status=201, body=answer_body, content_type="application/json", headers={"Location": f"/escalations/{esc.id}"}
    )


def _list_query(request: web.Request, principal) -> ListQuery:
    q = request.query
    # A repeated filter is refused rather than read as its first value: the
    # caller meant something this API does not do (OR of statuses).
    problems = [field_error(name, "must be given at most once") for name in LIST_PARAMETERS if len(q.getall(name, ())) > 1]
    status = q.get("status") or None
    if status is not None and status not in STATUSES:
        problems.append(field_error("status", "must be one of: " + ", ".join(STATUSES)))
    limit = DEFAULT_PAGE
    if "limit" in q:
        try:
            limit = int(q["limit"])
            if not 1 <= limit <= MAX_PAGE:
                raise ValueError
        except ValueError:
            problems.append(field_error("limit", f"must be an integer from 1 to {MAX_PAGE}"))
    cursor = q.get("cursor") or None
    if cursor is not None and not ESCALATION_ID.fullmatch(cursor):
        # Compared as text, "zzz" would list everything again and "aaa" nothing: a silent wrong page.
        problems.append(field_error("cursor", "must be a nextCursor of an earlier page"))
    order = q.get("order", "desc")
    if order not in ("asc", "desc"):
        problems.append(field_error("order", "must be asc or desc"))
    if problems:
        n = len(problems)
        raise ValidationFailed(f"{n} problem{'s' if n != 1 else ''} in the query", errors=problems)
    return ListQuery(
        workspace_id=principal.workspace_id,
        routes=principal.routes,
        status=status,
        policy=q.get("policy") or None,
        agent_id=q.get("agentId") or None,
        run_id=q.get("runId") or None,
        assignee=_assignee(q.get("assignee") or None, principal),
        limit=limit,
        cursor=cursor,
        ascending=order == "asc",
    )


def _assignee(value: str | None, principal) -> str | None:
    """``assignee=me`` is the caller (a user's name; a key, which nobody
    assigns, matches none)."""
    if value != "me":
        return value
    return principal.actor if principal.kind == "user" else "key:"


async def list_(request: web.Request) -> web.Response:
    principal = await require(request, scopes.READ)
    page, cursor = await request.app[SERVICE].list_escalations(_list_query(request, principal))
    return json_response({"data": [escalation_resource(e) for e in page], "nextCursor": cursor})


async def get(request: web.Request) -> web.Response:
    principal = await require(request, scopes.READ)
    esc = await request.app[SERVICE].get(principal, request.match_info["id"])
    return json_response(escalation_resource(esc))


async def acknowledge(request: web.Request) -> web.Response:
    principal = await require(request, scopes.ACKNOWLEDGE)
    service = request.app[SERVICE]
    esc = await service.get(principal, request.match_info["id"])
    await read_json(request, optional=True)
    return json_response(escalation_resource(await service.acknowledge(principal, esc)))


async def decide(request: web.Request) -> web.Response:
    principal = await require(request, scopes.DECIDE)
    service = request.app[SERVICE]
    esc = await service.get(principal, request.match_info["id"])
    body = await read_json(request)
    return json_response(escalation_resource(await service.decide(principal, esc, body)))


async def cancel(request: web.Request) -> web.Response:
    principal = await require(request, scopes.CANCEL)
    service = request.app[SERVICE]
    esc = await service.get(principal, request.match_info["id"])
    body = await read_json(request, optional=True)
    return json_response(escalation_resource(await service.cancel(principal, esc, body)))


def add_routes(app: web.Application) -> None:
    app.router.add_post("/escalations", create)
    app.router.add_get("/escalations", list_, allow_head=False)
    app.router.add_get("/escalations/{id}", get, allow_head=False)
    app.router.add_post("/escalations/{id}/acknowledge", acknowledge)
    app.router.add_post("/escalations/{id}/decide", decide)
    app.router.add_post("/escalations/{id}/cancel", cancel)
