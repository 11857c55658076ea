"""One exception base for the whole package.

An error says what went wrong in the domain's words: a stable ``code``, a
``title`` and a ``detail``. Each edge converts it exactly once: the HTTP
middleware into ``application/problem+json`` (CONTRACT §7), with the status
``escalated.http.statuses`` gives its code; the CLI into ``ClickException``.
"""

from __future__ import annotations

import logging
from typing import Any


class EscalatedError(Exception):
    """Base of every error we raise on purpose. A new code needs its status in
    ``escalated.http.statuses`` (a unit test checks every class's)."""

    code = "internal"
    title = "Internal error"

    def __init__(self, detail: str = "", *, errors: list[dict[str, str]] | None = None, **extra: Any):
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.errors = errors
        self.extra = extra


class InvalidJson(EscalatedError):
    code, title = "invalid_json", "Invalid JSON"


class Unauthenticated(EscalatedError):
    code, title = "unauthenticated", "Unauthenticated"


class InsufficientScope(EscalatedError):
    code, title = "insufficient_scope", "Insufficient scope"


class UserTokenRequired(EscalatedError):
    """A route that names the caller as a person (claim): an API key is no one."""

    code, title = "user_token_required", "User token required"


class NotFound(EscalatedError):
    code, title = "not_found", "Not found"


class MethodNotAllowed(EscalatedError):
    code, title = "method_not_allowed", "Method not allowed"


class InvalidState(EscalatedError):
    code, title = "invalid_state", "Invalid state"


class AlreadyApproved(InvalidState):
    """A user's second vote toward a quorum (CONTRACT §15)."""

    code, title = "already_approved", "Already approved"


class PayloadTooLarge(EscalatedError):
    code, title = "payload_too_large", "Payload too large"


class UnsupportedMediaType(EscalatedError):
    code, title = "unsupported_media_type", "Unsupported media type"


class ValidationFailed(EscalatedError):
    code, title = "validation_failed", "Validation failed"


class UnknownPolicy(ValidationFailed):
    code, title = "unknown_policy", "Unknown policy"


class DefaultChoiceNotOffered(ValidationFailed):
    code, title = "default_choice_not_offered", "Default choice not offered"


class IdempotencyKeyReused(ValidationFailed):
    code, title = "idempotency_key_reused", "Idempotency key reused"


class RateLimited(EscalatedError):
    code, title = "rate_limited", "Rate limited"


class DatabaseBusy(EscalatedError):
    """Another process has held SQLite's write lock past the writer's patience."""

    code, title = "busy", "Busy"


class Unavailable(EscalatedError):
    """A part the request needs is down for now: 503 with ``Retry-After``."""

    code, title = "unavailable", "Service unavailable"


class DatabaseUnavailable(Unavailable):
    """The database cannot be reached (PostgreSQL restarted, connections
    terminated): requests get 503 with ``Retry-After`` until it is back."""


class StorageFull(Unavailable):
    """The database's disk is full: writes fail until there is space again."""


# Failures of a database that is out of reach, locked elsewhere or full: they
# pass on their own. The clock, the sender and a create's remembered decision
# wait and try again, and log one line (the store already said why), never a
# traceback: an outage must not fill the log with stack traces.
TRANSIENT: tuple[type[EscalatedError], ...] = (DatabaseUnavailable, DatabaseBusy, StorageFull)


def log_failure(logger: logging.Logger, message: str, exc: BaseException, *args: object) -> None:
    """A failure someone retries later: one warning line ending in the error's
    own words when it is ``TRANSIENT``; anything else is a bug and is logged
    as an error with its traceback."""
    if isinstance(exc, TRANSIENT):
        logger.warning(message + " (%s)", *args, exc)
    else:
        logger.error(message, *args, exc_info=exc)


class ConfigError(EscalatedError):
    """Bad input to a CLI command, a policy file or an admin form.

    Shown to the person who typed it: the CLI's message, the admin page's form
    error, or a 400 problem if one reaches the API."""

    code, title = "config_error", "Invalid configuration"


def field_error(field: str, message: str) -> dict[str, str]:
    return {"field": field, "message": message}
