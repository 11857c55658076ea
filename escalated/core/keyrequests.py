"""A create-key request body (``POST /api-keys``), checked whole: every problem at once."""

from __future__ import annotations

from typing import Any

from escalated.domain.nul import NUL_MESSAGE, holds_control, nul_fields
from escalated.domain.scopes import ALL_SCOPES
from escalated.errors import ConfigError, ValidationFailed, field_error
from escalated.timeutil import parse_duration_s


def parse_key_request(
    body: dict[str, Any], *, default_scopes: frozenset[str], at_ms: int
) -> tuple[str | None, frozenset[str], int | None]:
    """(name, scopes, expires_ms) from a create-key body; every problem at once as a 422."""
    problems = [field_error(name, "unknown field") for name in sorted(set(body) - {"name", "scopes", "expiresIn"})]
    name = body.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 200 or holds_control(name.replace("\0", " "))):
        problems.append(field_error("name", "must be a non-empty string of at most 200 characters, no control characters"))
    else:
        problems += [field_error(field, NUL_MESSAGE) for field in nul_fields(name=name)]
    requested = body.get("scopes")
    scopes = default_scopes
    if requested is not None:
        if not isinstance(requested, list) or not requested or not all(isinstance(s, str) for s in requested):
            problems.append(field_error("scopes", "must be a non-empty array of scope names"))
        else:
            for i, s in enumerate(requested):
                if s not in ALL_SCOPES:
                    problems.append(field_error(f"scopes[{i}]", "unknown scope; one of: " + ", ".join(ALL_SCOPES)))
            scopes = frozenset(requested)
    expires_ms = None
    expires_in = body.get("expiresIn")
    if expires_in is not None:
        try:
            if not isinstance(expires_in, str):
                raise ConfigError("not a string")
            expires_ms = at_ms + int(parse_duration_s(expires_in) * 1000)
        except ConfigError:
            problems.append(field_error("expiresIn", "must be a duration like 90s, 15m, 4h, 2d or PT15M"))
    if problems:
        n = len(problems)
        raise ValidationFailed(f"{n} problem{'s' if n != 1 else ''}", errors=problems)
    return name, scopes, expires_ms
