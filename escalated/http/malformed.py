"""Requests aiohttp cannot parse: one log line, at most one a minute.

aiohttp answers a request it cannot parse (a NUL byte in a header, a bad
request line, an over-long header) with 400 and logs it through its
server logger with a whole traceback, per request: one unauthenticated
client grew a log by about 470 MB an hour. ``MalformedRequests`` stands in
for that logger (``serve`` passes it to aiohttp's request handler): a
malformed request is one line without a traceback, the first at once and
then a count at most every ``every_s``. Its words are aiohttp's first line
of the reason only: the rest quotes the raw bytes, which may hold a token.
Anything else aiohttp logs (a handler's real exception) passes through
with its traceback.

``ProblemAnswers`` is aiohttp's request handler answering such a request as
every other error is answered, ``application/problem+json`` (400
``invalid_json``: there is no body to read), instead of aiohttp's
``text/plain`` page, which also quoted the raw bytes back.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Callable

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler, RequestPayloadError

from escalated.errors import InvalidJson
from escalated.http.problems import problem

LOG_EVERY_S = 60.0
_QUOTED = re.compile(r":?\s*b['\"]")  # where aiohttp starts quoting the raw bytes
log = logging.getLogger("escalated.http")


class MalformedRequests(logging.LoggerAdapter):
    """aiohttp's server logger (``logger`` gets what is not a malformed request)."""

    def __init__(
        self, logger: logging.Logger, *, every_s: float = LOG_EVERY_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(logger, {})
        self.every_s = every_s
        self._clock = clock
        self._logged_at: float | None = None
        self._unreported = 0

    def exception(self, msg, *args, exc_info=True, **kwargs) -> None:
        exc = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1]
        if (parse_error := _parse_error(exc)) is not None:
            self.malformed(parse_error, remote=args[0] if args else None)
            return
        super().exception(msg, *args, exc_info=exc_info, **kwargs)

    def malformed(self, exc: HttpProcessingError, *, remote: str | None) -> None:
        now = self._clock()
        if self._logged_at is not None and now - self._logged_at < self.every_s:
            self._unreported += 1
            return
        earlier = f" ({self._unreported} more since the last report)" if self._unreported else ""
        self._logged_at, self._unreported = now, 0
        log.warning(
            "malformed request from %s answered %d: %s%s; further ones are counted and reported at most every %g s",
            remote or "an unknown address", exc.code, _reason(exc), earlier, self.every_s,
        )  # fmt: skip


def _parse_error(exc: BaseException | None) -> HttpProcessingError | None:
    """The parse error behind what aiohttp logs, if that is what it is: its own, or
    the one behind a body it could not decode (a Content-Encoding the bytes do not
    match), which it meets again as ``RequestPayloadError`` when it drains the body
    after the handler answered."""
    if isinstance(exc, HttpProcessingError):
        return exc
    if isinstance(exc, RequestPayloadError) and isinstance(exc.__cause__, HttpProcessingError):
        return exc.__cause__
    return None


def _reason(exc: HttpProcessingError) -> str:
    """The first line of aiohttp's message ("Invalid header value char"), never the bytes it
    quotes: an over-long line is quoted on the first line itself ("... when reading: b'...'")."""
    first = (exc.message or "").strip().splitlines()
    if not first:
        return type(exc).__name__
    return _QUOTED.split(first[0], maxsplit=1)[0].rstrip(":. ")


class ProblemAnswers(RequestHandler):
    """aiohttp's request handler, its own 400s answered as problem+json.

    aiohttp makes its handlers itself (``web.Server.__call__``) and has no
    option for their class, so the connection gate re-classes each one it
    hands out (same slots, no new state: Python checks the layout).
    """

    __slots__ = ()

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        answer = super().handle_error(request, status, exc, message)  # logs, and raises if an answer was begun
        parse_error = _parse_error(exc)
        if status != 400 or parse_error is None:
            return answer
        resp = problem(InvalidJson(f"not a well-formed HTTP request: {_reason(parse_error)}"), status=400)
        resp.force_close()  # what is left of the stream cannot be trusted to start a next request
        return resp
