"""The OpenAPI 3.1 document of every route. A test keeps it equal to the router."""

from __future__ import annotations

from functools import cache

from escalated import __version__
from escalated.domain.ids import ESCALATION_ID
from escalated.domain.models import STATUSES
from escalated.domain.nul import CONTROL_CHARACTERS
from escalated.domain.scopes import ALL_SCOPES
from escalated.domain.limits import MAX_CHOICES
from escalated.domain.validation import MAX_EVIDENCE, MAX_TEXT
from escalated.http import openapi_reviewerops

# The schema is as strict as the server on syntax (schemathesis checks both
# ways: what it allows must be accepted, what it refuses must be refused);
# refusals on meaning (an unknown policy, a choice not offered, a duplicate
# id, a refused callback host) stay 422s the schema cannot state.
_STR = {"type": "string"}
# Required text: not blank, bounded. "Blank" is what Python's str.strip()
# removes, spelled out: regex engines disagree on what \s covers (\x1c-\x1f).
# Nowhere the NUL character: PostgreSQL text cannot hold it, so the server
# refuses it on either backend.
NOT_BLANK = "^[^\\x00]*[^\\x00\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000][^\\x00]*$"
NO_NUL = "^[^\\x00]*$"
# A name: NOT_BLANK without control characters (C0, C1), which would split the CLI's lists.
_NO_CONTROL = f"[^{CONTROL_CHARACTERS}]"
NAME = f"^{_NO_CONTROL}*[^{CONTROL_CHARACTERS} \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]{_NO_CONTROL}*$"
_TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "pattern": NOT_BLANK}
_NULL_TEXT = {"type": ["string", "null"], "maxLength": MAX_TEXT, "pattern": NO_NUL}
_NUM = r"\d+(\.\d+)?"
# 90s, 15m, 4h, 2d, 250ms, or ISO 8601 (PT15M, P1DT2H), any case for ISO.
DURATION_PATTERN = (
    rf"^\s*({_NUM}\s*(ms|s|m|h|d)|[Pp](?=\d|[Tt]\d)({_NUM}[Dd])?([Tt](?=\d)({_NUM}[Hh])?({_NUM}[Mm])?({_NUM}[Ss])?)?)\s*$"
)
# http(s), then no space, control, format or separator character (urlsafety.py).
_URL = {
    "type": "string",
    "format": "uri",
    "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\ufeff]+$",
}
_TS = {"type": "string", "format": "date-time"}
_NULL_TS = {"type": ["string", "null"], "format": "date-time"}
_NULL_STR = {"type": ["string", "null"]}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict) -> dict:
    return {"content": {"application/json": {"schema": schema}}}


def _problem(description: str) -> dict:
    return {"description": description, "content": {"application/problem+json": {"schema": _ref("Problem")}}}


_ERRORS = {
    "401": _problem("Missing, malformed, unknown or revoked token"),
    "403": _problem("The token lacks the route's scope"),
    "429": _problem("Rate limited"),
    "503": _problem(
        "A write waited too long for a database lock held by another process (busy), or the database's disk is "
        "full (unavailable); retry after Retry-After"
    ),
}
_ID_ERRORS = {**_ERRORS, "404": _problem("Unknown, other workspace, or not routed")}
_BODY_ERRORS = {
    "400": _problem("Body is not a JSON object"),
    "413": _problem("Body over the limit"),
    "415": _problem("Body is not application/json"),
    "422": _problem("Validation failed"),
}
_ID_PARAM = {"name": "id", "in": "path", "required": True, "schema": _STR}

SCHEMAS = {
    "Problem": {
        "type": "object",
        "required": ["type", "title", "status", "code"],
        "properties": {
            "type": _STR,
            "title": _STR,
            "status": {"type": "integer"},
            "detail": _STR,
            "code": _STR,
            "errors": {
                "type": "array",
                "items": {"type": "object", "properties": {"field": _STR, "message": _STR}},
            },
            # Extension members (RFC 9457 §3.2), present only on the errors that carry them.
            "scope": {"type": "string", "description": "403 insufficient_scope: the scope the route needs"},
            "currentStatus": {"type": "string", "description": "409 invalid_state: the escalation's status now"},
        },
    },
    "Choice": {
        "type": "object",
        "required": ["id", "label"],
        "additionalProperties": False,
        "properties": {"id": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$"}, "label": _TEXT},
    },
    "Subject": {
        "type": "object",
        "required": ["type", "id", "label"],
        "additionalProperties": False,
        "properties": {"type": _TEXT, "id": _TEXT, "label": _TEXT},
    },
    "ResponseField": {
        "oneOf": [
            {
                "type": "object",
                "required": ["type", "name", "label"],
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "number"},
                    "name": _TEXT,
                    "label": _TEXT,
                    "min": {"type": "number"},
                    "step": {"type": "number", "exclusiveMinimum": 0},
                },
            },
            {
                "type": "object",
                "required": ["type", "name", "label", "options"],
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "select"},
                    "name": _TEXT,
                    "label": _TEXT,
                    "options": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["value", "label"],
                            "additionalProperties": False,
                            "properties": {"value": _TEXT, "label": _TEXT},
                        },
                    },
                },
            },
        ]
    },
    "CreateEscalation": {
        "type": "object",
        "required": ["policy", "agentId", "runId", "subject", "question", "evidence", "choices"],
        "additionalProperties": False,
        "properties": {
            "policy": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$"},
            "agentId": _TEXT,
            "runId": _TEXT,
            "subject": _ref("Subject"),
            "question": _TEXT,
            "evidence": {"type": "array", "maxItems": MAX_EVIDENCE, "items": {"type": "string", "maxLength": MAX_TEXT}},
            "choices": {"type": "array", "minItems": 1, "maxItems": MAX_CHOICES, "items": _ref("Choice")},
            "responseFields": {"type": ["array", "null"], "items": _ref("ResponseField")},  # null reads as omitted
            "resume": {
                "type": ["object", "null"],  # null reads as omitted
                "required": ["url"],
                "additionalProperties": False,
                "properties": {"mode": {"const": "webhook"}, "url": _URL, "secret": _TEXT},
            },
        },
    },
    "Escalation": {
        "type": "object",
        "required": ["id", "status", "policy", "agentId", "runId", "createdAt", "history"],
        "properties": {
            "id": _STR,
            "status": {"enum": list(STATUSES)},
            "policy": _STR,
            "agentId": _STR,
            "runId": _STR,
            "subject": _ref("Subject"),
            "question": _STR,
            "evidence": {"type": "array", "items": _STR},
            "choices": {"type": "array", "items": _ref("Choice")},
            "responseFields": {"type": "array", "items": _ref("ResponseField")},
            "resume": {
                "type": ["object", "null"],
                "properties": {"mode": _STR, "url": _STR, "signed": {"type": "boolean"}},
            },
            "createdAt": _TS,
            "deadlineAt": _NULL_TS,
            "defaultChoice": _NULL_STR,
            "acknowledgedBy": _NULL_STR,
            "acknowledgedAt": _NULL_TS,
            "assignee": _NULL_STR,
            "resolution": {
                "type": ["object", "null"],
                "properties": {
                    "choice": _STR,
                    "response": {"type": "object"},
                    "reason": _NULL_STR,
                    "resolvedBy": {"enum": ["human", "timeout"]},
                    "answeredBy": _STR,
                    "answeredAt": _TS,
                    "rule": {"type": "object", "properties": {"id": _STR, "createdBy": _STR}},
                },
            },
            "cancellation": {
                "type": ["object", "null"],
                "properties": {"reason": _NULL_STR, "cancelledBy": _STR, "cancelledAt": _TS},
            },
            "level": {"type": "integer", "minimum": 0, "description": "The highest escalation level reached (0 at creation)"},
            "approvals": {
                "type": "array",
                "description": "Votes for a quorum choice (CONTRACT §15), oldest first",
                "items": {"type": "object", "properties": {"by": _STR, "choice": _STR, "at": _TS}},
            },
            "history": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"event": _STR, "by": _STR, "at": _TS, "level": {"type": "integer", "minimum": 1}},
                },
            },
        },
    },
    "Decide": {
        "type": "object",
        "required": ["choice"],
        "additionalProperties": False,
        "properties": {"choice": _TEXT, "reason": _NULL_TEXT, "response": {"type": ["object", "null"]}},
    },
    "Cancel": {"type": "object", "additionalProperties": False, "properties": {"reason": _NULL_TEXT}},
    "Delivery": {
        "type": "object",
        "required": ["id", "kind", "target", "event", "status", "attempts"],
        "properties": {
            "id": _STR,
            "kind": {"enum": ["callback", "notification"]},
            "target": _STR,
            "event": _STR,
            "status": {"enum": ["pending", "delivered", "failed"]},
            "attempts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "at": _TS,
                        "statusCode": {"type": ["integer", "null"]},
                        "error": _NULL_STR,
                        "durationMs": {"type": "integer"},
                    },
                },
            },
            "nextAttemptAt": _NULL_TS,
        },
    },
    "ApiKey": {
        "type": "object",
        "properties": {
            "id": _STR,
            "key": _STR,
            "name": _NULL_STR,
            "scopes": {"type": "array", "items": _STR},
            "createdAt": _TS,
            "expiresAt": _NULL_TS,
            "revokedAt": _NULL_TS,
        },
    },
    "Me": {
        "type": "object",
        "required": ["kind", "name", "workspace", "scopes"],
        "properties": {
            "kind": {"enum": ["key", "user"]},
            "name": _STR,
            "workspace": _STR,
            "scopes": {"type": "array", "items": {"enum": list(ALL_SCOPES)}},
        },
    },
    "CreateApiKey": {
        "type": "object",
        "additionalProperties": False,
        # null reads as omitted, as the server treats it (a key's name is null when unnamed).
        "properties": {
            "name": {"type": ["string", "null"], "minLength": 1, "maxLength": 200, "pattern": NAME},
            "scopes": {"type": ["array", "null"], "minItems": 1, "items": {"enum": list(ALL_SCOPES)}},
            "expiresIn": {"type": ["string", "null"], "pattern": DURATION_PATTERN},
        },
    },
}


def _op(summary: str, responses: dict, **extra) -> dict:
    return {"summary": summary, "responses": responses, "security": [{"bearer": []}], **extra}


def _paths() -> dict:
    esc = _json(_ref("Escalation"))
    return {
        "/escalations": {
            "post": _op(
                "Create an escalation (scope escalations:write)",
                {
                    "201": {"description": "Created", **esc},
                    **_ERRORS,
                    **_BODY_ERRORS,
                },
                requestBody={"required": True, **_json(_ref("CreateEscalation"))},
                parameters=[{"name": "Idempotency-Key", "in": "header", "schema": {"type": "string", "pattern": "^[\\x20-\\x7e]{1,255}$"}}],
            ),
            "get": _op(
                "List escalations, newest first (scope escalations:read)",
                {
                    "200": {
                        "description": "A page",
                        **_json(
                            {
                                "type": "object",
                                "properties": {
                                    "data": {"type": "array", "items": _ref("Escalation")},
                                    "nextCursor": _NULL_STR,
                                },
                            }
                        ),
                    },
                    **_ERRORS,
                    "422": _problem("Bad query"),
                },
                parameters=[
                    {"name": n, "in": "query", "schema": s}
                    for n, s in (
                        # Empty means "any" for every filter (a form's unset field).
                        ("status", {"enum": ["", *STATUSES]}),
                        ("policy", _STR),
                        ("agentId", _STR),
                        ("runId", _STR),
                        ("assignee", _STR),  # a user's name, or "me"
                        ("limit", {"type": "integer", "minimum": 1, "maximum": 200}),
                        ("cursor", {"type": "string", "pattern": f"^({ESCALATION_ID.pattern})?$"}),  # a nextCursor
                        ("order", {"enum": ["asc", "desc"]}),
                    )
                ],
            ),
        },
        "/escalations/{id}": {"get": _op("Get an escalation", {"200": {"description": "OK", **esc}, **_ID_ERRORS}, parameters=[_ID_PARAM])},
        "/escalations/{id}/wait": {
            "get": _op(
                "Wait until resolved or cancelled, or the timeout (max 60 s) passes",
                {"200": {"description": "OK", **esc}, **_ID_ERRORS, "422": _problem("Bad timeout")},
                parameters=[_ID_PARAM, {"name": "timeout", "in": "query", "schema": {"type": "number", "minimum": 0, "maximum": 60}}],
            )
        },
        "/escalations/{id}/acknowledge": {
            "post": _op(
                "Acknowledge (idempotent; the first acknowledger is kept)",
                {
                    "200": {"description": "OK", **esc},
                    **_ID_ERRORS,
                    **{k: v for k, v in _BODY_ERRORS.items() if k != "422"},  # an optional body is still read
                    "409": _problem("Terminal"),
                },
                parameters=[_ID_PARAM],
            )
        },
        "/escalations/{id}/decide": {
            "post": _op(
                "Decide; for a quorum choice, approve (resolved once enough distinct users did)",
                {
                    "200": {"description": "Resolved, or the approval recorded while short of the quorum", **esc},
                    **_ID_ERRORS,
                    **_BODY_ERRORS,
                    "403": _problem("The token lacks the scope, or an API key chose a quorum choice (user_token_required)"),
                    "409": _problem("Terminal, or this user already approved (already_approved)"),
                },
                parameters=[_ID_PARAM],
                requestBody={"required": True, **_json(_ref("Decide"))},
            )
        },
        "/escalations/{id}/cancel": {
            "post": _op(
                "Cancel",
                {"200": {"description": "OK", **esc}, **_ID_ERRORS, **_BODY_ERRORS, "409": _problem("Terminal")},
                parameters=[_ID_PARAM],
                requestBody={"required": False, **_json(_ref("Cancel"))},
            )
        },
        "/escalations/{id}/deliveries": {
            "get": _op(
                "Callback and notification deliveries",
                {
                    "200": {
                        "description": "OK",
                        **_json({"type": "object", "properties": {"data": {"type": "array", "items": _ref("Delivery")}}}),
                    },
                    **_ID_ERRORS,
                },
                parameters=[_ID_PARAM],
            )
        },
        "/escalations/{id}/deliveries/retry": {
            "post": _op(
                "Queue a failed callback again (scope escalations:decide)",
                {"202": {"description": "Queued", **_json(_ref("Delivery"))}, **_ID_ERRORS, "409": _problem("No callback to retry")},
                parameters=[_ID_PARAM],
            )
        },
        "/events": {
            "get": _op(
                "Server-Sent Events: escalation.* of what the caller may see",
                {"200": {"description": "text/event-stream", "content": {"text/event-stream": {"schema": _STR}}}, **_ERRORS},
            )
        },
        "/api-keys": {
            "post": _op(
                "Issue an API key (subset of the caller's scopes)",
                {"201": {"description": "Created", **_json(_ref("ApiKey"))}, **_ERRORS, **_BODY_ERRORS},
                requestBody={"required": False, **_json(_ref("CreateApiKey"))},
            ),
            "get": _op(
                "List the workspace's API keys (no secrets)",
                {
                    "200": {
                        "description": "OK",
                        **_json({"type": "object", "properties": {"data": {"type": "array", "items": _ref("ApiKey")}}}),
                    },
                    **_ERRORS,
                },
            ),
        },
        "/me": {
            "get": _op(
                "Who the token is and what it may do (any valid token, no scope)",
                {"200": {"description": "OK", **_json(_ref("Me"))}, **{k: v for k, v in _ERRORS.items() if k != "403"}},
            )
        },
        "/api-keys/{id}": {
            "delete": _op("Revoke an API key", {"204": {"description": "Revoked"}, **_ID_ERRORS}, parameters=[_ID_PARAM])
        },
        "/healthz": {
            "get": {
                "summary": "Liveness",
                "security": [],
                "responses": {"200": {"description": "OK", **_json({"type": "object", "properties": {"status": {"const": "ok"}}})}},
            }
        },
        "/openapi.json": {
            "get": {"summary": "This document", "security": [], "responses": {"200": {"description": "OK", **_json({"type": "object"})}}}
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics",
                "security": [],
                "responses": {"200": {"description": "OK", "content": {"text/plain": {"schema": _STR}}}},
            }
        },
    }


@cache
def openapi_document() -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "escalated", "version": __version__, "description": "Hand an agent's decision to a human."},
        "components": {
            "schemas": {
                **SCHEMAS,
                **openapi_reviewerops.schemas(not_blank=NOT_BLANK, no_nul=NO_NUL, duration=DURATION_PATTERN),
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "paths": {
            **_paths(),
            **openapi_reviewerops.paths(
                op=_op, json=_json, errors=_ERRORS, id_errors=_ID_ERRORS, body_errors=_BODY_ERRORS,
                id_param=_ID_PARAM, problem=_problem,
            ),
        },
    }
