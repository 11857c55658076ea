"""The OpenAPI part of the reviewer operations (CONTRACT §15): claim, assign
and ``/rules``. ``openapi.py`` merges it into the one document."""

from __future__ import annotations

from escalated.domain.rules import MAX_MATCH_VALUE, MAX_REASON

_STR = {"type": "string"}
_TS = {"type": "string", "format": "date-time"}
_NULL_TS = {"type": ["string", "null"], "format": "date-time"}
_NULL_STR = {"type": ["string", "null"]}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def schemas(*, not_blank: str, no_nul: str, duration: str) -> dict:
    match_value = {"type": "string", "minLength": 1, "maxLength": MAX_MATCH_VALUE, "pattern": not_blank}
    return {
        "Assign": {
            "type": "object",
            "required": ["user"],
            "additionalProperties": False,
            "properties": {"user": {"type": ["string", "null"], "pattern": no_nul}},
        },
        "CreateRule": {
            "type": "object",
            "required": ["policy", "choice", "reason"],
            "additionalProperties": False,
            "properties": {
                "policy": {"type": "string", "maxLength": MAX_MATCH_VALUE, "pattern": "^[a-z0-9][a-z0-9_-]*(\\.[a-z0-9][a-z0-9_-]*)*$"},
                "choice": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$"},
                "match": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"agentId": match_value, "subjectType": match_value, "subjectId": match_value},
                },
                # At most 30 days: a longer one is a 422 on meaning, as for keys.
                "expiresIn": {"type": ["string", "null"], "pattern": duration},
                "reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON, "pattern": not_blank},
            },
        },
        "Rule": {
            "type": "object",
            "required": ["id", "policy", "choice", "match", "reason", "status", "createdBy", "createdAt", "expiresAt", "uses"],
            "properties": {
                "id": _STR,
                "policy": _STR,
                "choice": _STR,
                "match": {"type": "object", "properties": {"agentId": _STR, "subjectType": _STR, "subjectId": _STR}},
                "reason": _STR,
                "status": {"enum": ["active", "expired", "revoked"]},
                "createdBy": _STR,
                "createdAt": _TS,
                "expiresAt": _TS,
                "revokedBy": _NULL_STR,
                "revokedAt": _NULL_TS,
                "uses": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"escalationId": _STR, "at": _TS}},
                },
            },
        },
    }


def paths(*, op, json, errors: dict, id_errors: dict, body_errors: dict, id_param: dict, problem) -> dict:
    esc = json(_ref("Escalation"))
    rule = json(_ref("Rule"))
    read_body_errors = {k: v for k, v in body_errors.items() if k != "422"}
    return {
        "/escalations/{id}/claim": {
            "post": op(
                "Claim: the caller (a user token) becomes the assignee and acknowledges (scope escalations:acknowledge)",
                {
                    "200": {"description": "OK", **esc},
                    **id_errors,
                    **read_body_errors,
                    "403": problem("The token lacks the scope, or is an API key (user_token_required)"),
                    "409": problem("Terminal"),
                },
                parameters=[id_param],
            )
        },
        "/escalations/{id}/assign": {
            "post": op(
                "Assign to a user the escalation is routed to; null unassigns (scope escalations:decide)",
                {"200": {"description": "OK", **esc}, **id_errors, **body_errors, "409": problem("Terminal")},
                parameters=[id_param],
                requestBody={"required": True, **json(_ref("Assign"))},
            )
        },
        "/rules": {
            "post": op(
                "Remember a decision for matching new escalations, at most 30 days (scope escalations:decide)",
                {"201": {"description": "Created", **rule}, **errors, **body_errors},
                requestBody={"required": True, **json(_ref("CreateRule"))},
            ),
            "get": op(
                "Every rule of the policies routed to the caller, revoked and expired too, with each use",
                {
                    "200": {
                        "description": "OK",
                        **json({"type": "object", "properties": {"data": {"type": "array", "items": _ref("Rule")}}}),
                    },
                    **errors,
                },
            ),
        },
        "/rules/{id}": {
            "get": op("Get a rule with each use", {"200": {"description": "OK", **rule}, **id_errors}, parameters=[id_param]),
            "delete": op(
                "Revoke a rule (idempotent; it stays listed)",
                {"204": {"description": "Revoked"}, **id_errors},
                parameters=[id_param],
            ),
        },
    }
