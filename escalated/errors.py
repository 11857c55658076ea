"""One exception base for the whole package.

Each edge converts it exactly once: the HTTP middleware into
``application/problem+json`` (CONTRACT §7), the CLI into ``ClickException``.
"""

from __future__ import annotations

from typing import Any


class EscalatedError(Exception):
    """Base of every error we raise on purpose."""

    status = 500
    code = "internal"
    title = "Internal error"

    def __init__(self, detail: str = "", *, errors: list[dict[str, str]] | None = None, **extra: Any):
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.errors = errors
        self.extra = extra


class InvalidJson(EscalatedError):
    status, code, title = 400, "invalid_json", "Invalid JSON"


class Unauthenticated(EscalatedError):
    status, code, title = 401, "unauthenticated", "Unauthenticated"


class InsufficientScope(EscalatedError):
    status, code, title = 403, "insufficient_scope", "Insufficient scope"


class UserTokenRequired(EscalatedError):
    """A route that names the caller as a person (claim): an API key is no one."""

    status, code, title = 403, "user_token_required", "User token required"


class NotFound(EscalatedError):
    status, code, title = 404, "not_found", "Not found"


class MethodNotAllowed(EscalatedError):
    status, code, title = 405, "method_not_allowed", "Method not allowed"


class InvalidState(EscalatedError):
    status, code, title = 409, "invalid_state", "Invalid state"


class AlreadyApproved(InvalidState):
    """A user's second vote toward a quorum (CONTRACT §15)."""

    status, code, title = 409, "already_approved", "Already approved"


class PayloadTooLarge(EscalatedError):
    status, code, title = 413, "payload_too_large", "Payload too large"


class UnsupportedMediaType(EscalatedError):
    status, code, title = 415, "unsupported_media_type", "Unsupported media type"


class ValidationFailed(EscalatedError):
    status, code, title = 422, "validation_failed", "Validation failed"


class UnknownPolicy(ValidationFailed):
    code, title = "unknown_policy", "Unknown policy"


class DefaultChoiceNotOffered(ValidationFailed):
    code, title = "default_choice_not_offered", "Default choice not offered"


class IdempotencyKeyReused(ValidationFailed):
    code, title = "idempotency_key_reused", "Idempotency key reused"


class RateLimited(EscalatedError):
    status, code, title = 429, "rate_limited", "Rate limited"


class DatabaseBusy(EscalatedError):
    """Another process has held SQLite's write lock past the writer's patience."""

    status, code, title = 503, "busy", "Busy"


class DatabaseUnavailable(EscalatedError):
    """The database cannot be reached (PostgreSQL restarted, connections
    terminated): requests get 503 with ``Retry-After`` until it is back."""

    status, code, title = 503, "unavailable", "Service unavailable"


class StorageFull(EscalatedError):
    """The database's disk is full: writes fail until there is space again."""

    status, code, title = 503, "unavailable", "Service unavailable"


class ConfigError(EscalatedError):
    """Bad input to a CLI command or a policy file; never reaches HTTP."""

    status, code, title = 400, "config_error", "Invalid configuration"


def field_error(field: str, message: str) -> dict[str, str]:
    return {"field": field, "message": message}
