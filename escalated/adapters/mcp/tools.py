"""The MCP tools (CONTRACT §14): names, the scope each needs, and their JSON
schemas, in one place for both transports.

``escalated mcp`` (stdio, over HTTP) and ``serve --mcp`` (``/mcp``, through
the core) list exactly these. Pure data and the SDK's ``Tool`` type only:
nothing here talks to a server.
"""

from __future__ import annotations

from typing import Any

import attrs
from mcp.types import Tool, ToolAnnotations

from escalated.domain import scopes
from escalated.domain.models import STATUSES

# A get_decision call is one long poll: short enough that no MCP client or
# proxy in between times out (most give up at 30 to 60 s).
MAX_WAIT_S = 25
DEFAULT_WAIT_S = 20
MAX_LIST = 200
DEFAULT_LIST = 50
MAX_IDEMPOTENCY_KEY = 255  # as the HTTP Idempotency-Key header

REQUEST_DECISION = "request_decision"
GET_DECISION = "get_decision"
LIST_ESCALATIONS = "list_escalations"
DECIDE = "decide"
CANCEL_ESCALATION = "cancel_escalation"

_TEXT = {"type": "string"}
_ID = {"type": "string", "description": "The escalation's id (esc_...), as request_decision returned it."}
_TIMESTAMP_OR_NULL = {"type": ["string", "null"], "description": "RFC 3339 UTC"}
_STATUS = {"type": "string", "enum": list(STATUSES)}
_ESCALATION = {
    "type": "object",
    "description": "The escalation resource, as the HTTP API returns it.",
    "properties": {"id": _TEXT, "status": _STATUS},
    "required": ["id", "status"],
}


@attrs.frozen
class ToolSpec:
    name: str
    scope: str  # listed only to a token holding it
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    read_only: bool = False

    def tool(self) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=ToolAnnotations(title=self.title, read_only_hint=self.read_only, open_world_hint=False),
        )


def _object(properties: dict[str, Any], *, required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_CHOICE = _object(
    {
        "id": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$", "description": "What get_decision returns as choice."},
        "label": {"type": "string", "description": "What the reviewer reads."},
    },
    required=("id", "label"),
)
_SUBJECT = _object(
    {"type": _TEXT, "id": _TEXT, "label": _TEXT},
    required=("type", "id", "label"),
)

REQUEST_DECISION_SPEC = ToolSpec(
    name=REQUEST_DECISION,
    scope=scopes.WRITE,
    title="Ask a human to decide",
    description=(
        "Hand a decision to a human reviewer through escalated. Returns at once with the escalation's id and "
        "status 'open'; then call get_decision with that id until its status is 'resolved' or 'cancelled', "
        "and act on the choice it returns. Give an idempotencyKey so that a retried call never asks twice. "
        "A policy with an SLA resolves with its default choice when nobody answers in time."
    ),
    input_schema=_object(
        {
            "policy": {"type": "string", "description": "The escalation policy's key (who reviews, the SLA), e.g. refunds.large."},
            "question": {"type": "string", "description": "What the reviewer is asked, in one sentence."},
            "evidence": {"type": "array", "items": _TEXT, "description": "Facts the reviewer needs, one per item."},
            "choices": {"type": "array", "items": _CHOICE, "minItems": 1, "maxItems": 20},
            "subject": {**_SUBJECT, "description": "What the decision is about (default: this run)."},
            "responseFields": {
                "type": "array",
                "items": {"type": "object"},
                "description": "Values the reviewer fills in (type number or select), as in the HTTP API.",
            },
            "runId": {"type": "string", "description": "Your run's id (default: mcp-<idempotencyKey>, or a new id)."},
            "agentId": {"type": "string", "description": "Who asks (default: the MCP client's name)."},
            "idempotencyKey": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_IDEMPOTENCY_KEY,
                "pattern": "^[\\x20-\\x7e]+$",
                "description": "The same key with the same arguments returns the same escalation instead of a new one.",
            },
        },
        required=("policy", "question", "evidence", "choices"),
    ),
    output_schema={
        "type": "object",
        "properties": {
            "escalationId": _TEXT,
            "status": _STATUS,
            "deadlineAt": _TIMESTAMP_OR_NULL,
            "webUrl": {"type": "string", "description": "The escalation's page in escalated's web app."},
        },
        "required": ["escalationId", "status", "deadlineAt", "webUrl"],
    },
)

GET_DECISION_SPEC = ToolSpec(
    name=GET_DECISION,
    scope=scopes.READ,
    title="Get the human's decision",
    description=(
        "Wait up to waitSeconds for the escalation to be decided, then return its status. While the status "
        "is 'open' or 'acknowledged', call again. Once 'resolved' the result holds choice, response, reason, "
        "resolvedBy ('human' or 'timeout') and answeredBy; 'cancelled' means nobody will decide."
    ),
    input_schema=_object(
        {
            "escalationId": _ID,
            "waitSeconds": {
                "type": "number",
                "minimum": 0,
                "maximum": MAX_WAIT_S,
                "default": DEFAULT_WAIT_S,
                "description": f"How long to wait for a decision before answering (0 to {MAX_WAIT_S}).",
            },
        },
        required=("escalationId",),
    ),
    output_schema={
        "type": "object",
        "properties": {
            "escalationId": _TEXT,
            "status": _STATUS,
            "choice": _TEXT,
            "response": {"type": ["object", "null"]},
            "reason": {"type": ["string", "null"]},
            "resolvedBy": {"type": "string", "enum": ["human", "timeout"]},
            "answeredBy": _TEXT,
            "answeredAt": _TEXT,
            "cancelledBy": _TEXT,
            "cancelledAt": _TEXT,
        },
        "required": ["escalationId", "status"],
    },
    read_only=True,
)

LIST_ESCALATIONS_SPEC = ToolSpec(
    name=LIST_ESCALATIONS,
    scope=scopes.READ,
    title="List escalations",
    description="The escalations this token may see, newest first; a reviewer's token lists their queue.",
    input_schema=_object(
        {
            "status": {**_STATUS, "description": "Only escalations in this status."},
            "policy": {"type": "string", "description": "Only escalations of this policy."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIST, "default": DEFAULT_LIST},
        }
    ),
    output_schema={
        "type": "object",
        "properties": {"escalations": {"type": "array", "items": _ESCALATION}},
        "required": ["escalations"],
    },
    read_only=True,
)

DECIDE_SPEC = ToolSpec(
    name=DECIDE,
    scope=scopes.DECIDE,
    title="Decide an escalation",
    description="As a reviewer: resolve an escalation with one of its choices (and the response its fields ask for).",
    input_schema=_object(
        {
            "escalationId": _ID,
            "choice": {"type": "string", "description": "One of the escalation's choice ids."},
            "reason": {"type": "string"},
            "response": {"type": "object", "description": "The values of the escalation's responseFields."},
        },
        required=("escalationId", "choice"),
    ),
    output_schema=_ESCALATION,
)

CANCEL_ESCALATION_SPEC = ToolSpec(
    name=CANCEL_ESCALATION,
    scope=scopes.CANCEL,
    title="Cancel an escalation",
    description="Withdraw an open escalation: nobody needs to decide it any more.",
    input_schema=_object({"escalationId": _ID, "reason": {"type": "string"}}, required=("escalationId",)),
    output_schema=_ESCALATION,
)

TOOLS: tuple[ToolSpec, ...] = (
    REQUEST_DECISION_SPEC,
    GET_DECISION_SPEC,
    LIST_ESCALATIONS_SPEC,
    DECIDE_SPEC,
    CANCEL_ESCALATION_SPEC,
)
BY_NAME = {spec.name: spec for spec in TOOLS}


def tools_for(granted: frozenset[str] | set[str]) -> list[Tool]:
    """The tools a token holding ``granted`` scopes may call, in table order."""
    return [spec.tool() for spec in TOOLS if spec.scope in granted]
