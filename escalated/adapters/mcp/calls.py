"""What each MCP tool does, against a ``Backend``: the HTTP API for ``escalated
mcp``, the core itself for ``serve --mcp``. Arguments in, ``structuredContent``
out; every failure is an ``EscalatedError`` whose words the caller shows.
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol

import jsonschema

from escalated.adapters.mcp import tools
from escalated.errors import EscalatedError, InsufficientScope, ValidationFailed, field_error

DEFAULT_AGENT_ID = "mcp"  # when the MCP client gives no name
# An error goes into the model's context: as the API's problem bodies, list
# this many problems and cut long texts (a schema error quotes the value).
MAX_LISTED_PROBLEMS = 10
MAX_PROBLEM_TEXT = 200


class UnknownTool(EscalatedError):
    code, title = "unknown_tool", "Unknown tool"


class Backend(Protocol):
    """The five operations the tools need; each answers escalation resources
    (the HTTP API's JSON) and raises ``EscalatedError`` with the problem's words."""

    async def scopes(self) -> frozenset[str]: ...

    async def create(self, body: dict[str, Any], *, idempotency_key: str | None) -> dict[str, Any]: ...

    async def wait(self, escalation_id: str, *, timeout_s: float) -> dict[str, Any]: ...

    async def list(self, *, status: str | None, policy: str | None, limit: int) -> list[dict[str, Any]]: ...

    async def decide(self, escalation_id: str, body: dict[str, Any]) -> dict[str, Any]: ...

    async def cancel(self, escalation_id: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def web_url(self, escalation_id: str) -> str: ...


async def call_tool(backend: Backend, name: str, arguments: dict[str, Any], *, client_name: str | None) -> dict:
    """Run one tool: 404 (no such tool), then 403 (scope), then 422 (arguments)
    — the order of the HTTP API's checks."""
    spec = tools.BY_NAME.get(name)
    if spec is None:
        raise UnknownTool(f"no tool named {name!r}; the tools are " + ", ".join(tools.BY_NAME))
    if spec.scope not in await backend.scopes():
        raise InsufficientScope(f"this tool needs the scope {spec.scope}", scope=spec.scope)
    check_arguments(spec, arguments)
    if name == tools.REQUEST_DECISION:
        return await request_decision(backend, arguments, client_name=client_name)
    if name == tools.GET_DECISION:
        waited_s = float(arguments.get("waitSeconds", tools.DEFAULT_WAIT_S))
        return decision(await backend.wait(arguments["escalationId"], timeout_s=waited_s))
    if name == tools.LIST_ESCALATIONS:
        found = await backend.list(
            status=arguments.get("status"),
            policy=arguments.get("policy"),
            limit=int(arguments.get("limit", tools.DEFAULT_LIST)),
        )
        return {"escalations": found}
    body = {k: v for k, v in arguments.items() if k != "escalationId"}
    if name == tools.DECIDE:
        return await backend.decide(arguments["escalationId"], body)
    return await backend.cancel(arguments["escalationId"], body)


def check_arguments(spec: tools.ToolSpec, arguments: dict[str, Any]) -> None:
    """The tool's input schema, checked here so both transports refuse alike
    (the SDK's low-level server passes arguments through as sent)."""
    validator = jsonschema.Draft202012Validator(spec.input_schema)
    problems = [
        field_error(_field(error.absolute_path), error.message)
        for error in sorted(validator.iter_errors(arguments), key=lambda e: list(map(str, e.absolute_path)))
    ]
    if problems:
        n = len(problems)
        raise ValidationFailed(f"{n} problem{'s' if n != 1 else ''} in the arguments of {spec.name}", errors=problems)


def _field(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


async def request_decision(backend: Backend, arguments: dict[str, Any], *, client_name: str | None) -> dict:
    key = arguments.get("idempotencyKey")
    # Derived from the key, so a retried call sends the same body and the
    # server replays the first answer instead of refusing a changed body.
    run_id = arguments.get("runId") or (f"mcp-{key}" if key else f"mcp-{uuid.uuid4().hex}")
    agent_id = arguments.get("agentId") or client_name or DEFAULT_AGENT_ID
    body = {
        "policy": arguments["policy"],
        "agentId": agent_id,
        "runId": run_id,
        "subject": arguments.get("subject") or {"type": "mcp_run", "id": run_id, "label": agent_id},
        "question": arguments["question"],
        "evidence": arguments["evidence"],
        "choices": arguments["choices"],
    }
    if "responseFields" in arguments:
        body["responseFields"] = arguments["responseFields"]
    escalation = await backend.create(body, idempotency_key=key)
    return {
        "escalationId": escalation["id"],
        "status": escalation["status"],
        "deadlineAt": escalation["deadlineAt"],
        "webUrl": backend.web_url(escalation["id"]),
    }


def decision(escalation: dict[str, Any]) -> dict:
    """get_decision's answer: the status, and once there is one, the outcome."""
    out: dict[str, Any] = {"escalationId": escalation["id"], "status": escalation["status"]}
    if (resolution := escalation.get("resolution")) is not None:
        out.update(
            choice=resolution["choice"],
            response=resolution.get("response"),
            reason=resolution.get("reason"),
            resolvedBy=resolution["resolvedBy"],
            answeredBy=resolution["answeredBy"],
            answeredAt=resolution["answeredAt"],
        )
    elif (cancellation := escalation.get("cancellation")) is not None:
        out.update(
            reason=cancellation.get("reason"),
            cancelledBy=cancellation["cancelledBy"],
            cancelledAt=cancellation["cancelledAt"],
        )
    return out


def error_text(error: EscalatedError) -> str:
    """The problem's words: its title and detail, and the fields it names."""
    detail = _cut(error.detail)
    text = detail if detail.startswith(error.title) else f"{error.title}: {detail}"
    listed = _listed(error)
    if listed:
        text += " (" + "; ".join(f"{e['field']}: {e['message']}" for e in listed) + ")"
    return text


def error_content(error: EscalatedError, status: int) -> dict:
    """The problem as the API's body would give it, ``status`` included."""
    problem: dict[str, Any] = {"status": status, "code": error.code, "title": error.title, "detail": _cut(error.detail)}
    if listed := _listed(error):
        problem["errors"] = listed
    return {"error": problem}


def _listed(error: EscalatedError) -> list[dict[str, str]]:
    return [
        {"field": _cut(str(e.get("field"))), "message": _cut(str(e.get("message")))}
        for e in (error.errors or [])[:MAX_LISTED_PROBLEMS]
    ]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PROBLEM_TEXT else text[: MAX_PROBLEM_TEXT - 1] + "…"
