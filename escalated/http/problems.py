"""``application/problem+json`` (RFC 9457) for every error, and the middleware
that turns anything raised into one. Never a stack trace in a body. The
status is the one ``statuses`` gives the error's code."""

from __future__ import annotations

import logging
import time

import orjson
from aiohttp import web

from escalated.http.appkeys import METRICS
from escalated.errors import (
    EscalatedError,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    UnsupportedMediaType,
)
from escalated.http.statuses import status_of

log = logging.getLogger("escalated.http")
PROBLEM_TYPE = "application/problem+json"

# A body of 15,000 unknown fields once gave a 664 KB error: list this many
# problems, say how many more in ``detail``, and cut long field names.
MAX_LISTED_PROBLEMS = 50
MAX_PROBLEM_TEXT = 200

_HTTP_EXCEPTIONS: dict[int, type[EscalatedError]] = {
    404: NotFound,
    405: MethodNotAllowed,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
}


def problem(exc: EscalatedError, *, status: int | None = None) -> web.Response:
    """``exc`` as a problem, with its code's status unless ``status`` is given
    (an aiohttp error with no code of ours)."""
    status = status_of(exc) if status is None else status
    body = {
        "type": f"urn:escalated:error:{exc.code}",
        "title": exc.title,
        "status": status,
        "detail": exc.detail,
        "code": exc.code,
    }
    if exc.errors is not None:
        body["errors"] = [{k: _cut(v) for k, v in e.items()} for e in exc.errors[:MAX_LISTED_PROBLEMS]]
        if (more := len(exc.errors) - MAX_LISTED_PROBLEMS) > 0:
            body["detail"] = f"{exc.detail} (the first {MAX_LISTED_PROBLEMS} are listed; {more} more)"
    headers = {}
    for name, value in exc.extra.items():
        if name == "retry_after_s":
            headers["Retry-After"] = retry_after(value)
        elif name == "current_status":
            body["currentStatus"] = value
        elif name == "scope":
            body["scope"] = value
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="escalated"'
    return web.Response(status=status, body=orjson.dumps(body), content_type=PROBLEM_TYPE, headers=headers)


def retry_after(seconds: float) -> str:
    """A ``Retry-After`` value: whole seconds, rounded up, at least 1."""
    return str(max(1, int(seconds + 0.999)))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PROBLEM_TEXT else text[: MAX_PROBLEM_TEXT - 1] + "…"


def _from_http_exception(exc: web.HTTPException) -> EscalatedError:
    """The error of ours for aiohttp's; ``http_error`` (answered with the
    aiohttp error's own status) when there is none."""
    cls = _HTTP_EXCEPTIONS.get(exc.status)
    if cls is None:
        error = EscalatedError(exc.reason)
        error.code, error.title = "http_error", exc.reason
        return error
    if exc.status == 405:
        return cls(f"{exc.method} is not allowed here; allowed: {', '.join(sorted(exc.allowed_methods))}")  # type: ignore[attr-defined]
    return cls()


@web.middleware
async def error_middleware(request: web.Request, handler) -> web.StreamResponse:
    started = time.perf_counter()
    resource = request.match_info.route.resource
    route = resource.canonical if resource else "unmatched"
    try:
        response = await handler(request)
    except EscalatedError as exc:
        response = problem(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = problem(_from_http_exception(exc), status=exc.status)
        if exc.status == 405:
            response.headers["Allow"] = exc.headers.get("Allow", "")
    except Exception:
        log.exception("internal error on %s %s", request.method, route)
        response = problem(EscalatedError("an internal error occurred; it has been logged"))
    metrics = request.app.get(METRICS)
    if metrics is not None:
        metrics.request_answered(request.method, route, response.status, duration_s=time.perf_counter() - started)
    return response
