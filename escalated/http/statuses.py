"""The HTTP status each error code answers (CONTRACT §7).

The errors themselves (``escalated.errors`` and the few defined beside the
code that raises them) carry a code, a title and a detail: what went wrong in
the domain's words. Which status that is on the wire is the HTTP edge's
business, decided here once for the problem+json bodies, the web app's error
pages and the MCP tools' error results.

Every error class's code is listed (tests/unit/test_error_statuses.py checks
it), so a new error cannot silently answer 500. This module imports nothing
but the errors, so ``escalated mcp`` (the agent side) may use it without
pulling in the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from escalated.errors import EscalatedError

INTERNAL = 500

STATUS_OF_CODE: Mapping[str, int] = MappingProxyType(
    {
        # escalated.errors: the ones every layer raises
        "internal": INTERNAL,
        "invalid_json": 400,
        "config_error": 400,  # a bad CLI argument or policy file; 400 if one reaches a surface
        "unauthenticated": 401,
        "insufficient_scope": 403,
        "user_token_required": 403,
        "not_found": 404,
        "method_not_allowed": 405,
        "invalid_state": 409,
        "already_approved": 409,
        "payload_too_large": 413,
        "unsupported_media_type": 415,
        "validation_failed": 422,
        "unknown_policy": 422,
        "default_choice_not_offered": 422,
        "idempotency_key_reused": 422,
        "rate_limited": 429,
        "busy": 503,
        "unavailable": 503,
        # the web app's sessions (escalated.web.session)
        "signed_out": 401,
        "csrf": 403,
        "admin_only": 403,
        "malformed_form": 400,
        # serve's lock on a SQLite database (escalated.store.sqlite.serverlock)
        "already_serving": 409,
        # the MCP tools (escalated.adapters.mcp.calls)
        "unknown_tool": 404,
        # the contract generator's files and remote runs (ConfigError's kin)
        "apply_failed": 400,
        "file_changed": 400,
        "remote_failed": 400,
        "contract_file_invalid": 400,
        # the agent side's own failures: never an answer of the server
        "guard_error": INTERNAL,
        "contract_not_found": INTERNAL,
        "guard_failed_closed": INTERNAL,
        "escalation_rejected": INTERNAL,
        "approval_unavailable": INTERNAL,
        "invalid_server_url": INTERNAL,
        "invalid_token": INTERNAL,
        "run_store": INTERNAL,
    }
)


def status_of(error: EscalatedError) -> int:
    """The status ``error`` answers; 500 for a code not listed."""
    return STATUS_OF_CODE.get(error.code, INTERNAL)
