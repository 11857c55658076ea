"""Slow and half-open clients (slowloris) must not lock others out.

Two defences, both in front of aiohttp's request handling:

- A header-read timeout (``Settings.header_timeout_s``, ``--header-timeout``):
  a connection must complete a request's headers within this long of
  opening, or of its previous answer, else it is closed. aiohttp's
  keep-alive timer does exactly this (it fires while the connection waits
  for a whole request, however slowly bytes trickle in), so
  ``runner_options`` sets it; aiohttp's default is an hour.
- A connection cap below the open-file limit, so accepting never fails with
  EMFILE (which asyncio logs with a traceback each time). At the cap a new
  connection displaces the oldest one that is not inside a request (a
  half-open or idle keep-alive one); if every connection is inside a
  request, the newcomer gets ``503 busy`` with ``Retry-After: 1``. One log
  line, at most every ``LOG_EVERY_S``, says so.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time

from aiohttp import web

from escalated.core.settings import Settings
from escalated.http.malformed import MalformedRequests, ProblemAnswers

log = logging.getLogger(__name__)

# asyncio accepts up to a whole backlog of sockets in one go, and the gate
# closes a displaced connection a loop turn later, so up to about three
# backlogs are open beyond the cap; SQLite, callbacks and the resolver need
# descriptors too.
BACKLOG = 64
RESERVED_FDS = 256
MIN_CONNECTIONS = 16
LOG_EVERY_S = 10.0
PENDING_FOR_AT_MOST_S = 5.0  # a connection that failed before connection_made stops counting
IN_REQUEST: web.AppKey[set] = web.AppKey("in_request", set)
_BUSY_BODY = (
    b'{"type":"about:blank","title":"Busy","status":503,"code":"busy",'
    b'"detail":"too many open connections; try again in a second"}'
)
BUSY_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\n"
    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


def runner_options(settings: Settings) -> dict:
    # A request aiohttp cannot parse is one rate-limited line, not a traceback each (malformed.py).
    malformed = MalformedRequests(logging.getLogger("aiohttp.server"))
    return {"keepalive_timeout": settings.header_timeout_s, "logger": malformed}


def default_max_connections() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 65536
    return max(MIN_CONNECTIONS, soft - RESERVED_FDS)


def track_requests(app: web.Application) -> None:
    """Record which connections are inside a request (those are never displaced)."""
    app[IN_REQUEST] = in_request = set()  # aiohttp's handlers take no weak references

    @web.middleware
    async def tracking(request: web.Request, handler):
        in_request.add(request.protocol)
        try:
            return await handler(request)
        finally:
            in_request.discard(request.protocol)

    app.middlewares.insert(0, tracking)


class _Busy(asyncio.Protocol):
    """Answers 503 busy and hangs up, without reading the request."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(BUSY_ANSWER)  # type: ignore[attr-defined]
        transport.close()


class ConnectionGate:
    """The protocol factory handed to ``loop.create_server``: caps connections."""

    def __init__(self, server: web.Server, *, in_request: set, max_connections: int) -> None:
        self._server = server
        self._in_request = in_request
        self.max_connections = max_connections
        self._closing: set = set()  # displaced, not yet gone from the server's list
        # Made by this factory, not yet in the server's list: asyncio calls
        # connection_made a loop turn later, and a burst of accepts must count.
        self._pending: dict = {}  # handler -> made at (monotonic s)
        self._displaced = self._refused = 0
        self._logged_at = float("-inf")

    def __call__(self) -> asyncio.Protocol:
        if self._open() >= self.max_connections and not self._displace_one():
            self._refused += 1
            self._log()
            return _Busy()
        handler = self._server()
        handler.__class__ = ProblemAnswers  # its own 400s as problem+json (malformed.py)
        self._pending[handler] = time.monotonic()
        return handler

    def _open(self) -> int:
        connections = self._server.connections
        registered = set(connections)
        stale_s = time.monotonic() - PENDING_FOR_AT_MOST_S
        self._pending = {h: at for h, at in self._pending.items() if h not in registered and at > stale_s}
        return len(connections) + len(self._pending)

    def _displace_one(self) -> bool:
        connections = self._server.connections  # oldest first (the server keeps them in a dict)
        self._closing.intersection_update(connections)
        for handler in connections:
            if handler not in self._in_request and handler not in self._closing:
                self._closing.add(handler)
                handler.force_close()
                self._displaced += 1
                self._log()
                return True
        return False

    def _log(self) -> None:
        now = time.monotonic()
        if now - self._logged_at < LOG_EVERY_S:
            return
        self._logged_at = now
        log.warning(
            "connection cap reached (%d open, cap %d from the open-file limit): closed %d idle or half-open "
            "connections, answered %d with 503 busy since the last report",
            len(self._server.connections), self.max_connections, self._displaced, self._refused,
        )
        self._displaced = self._refused = 0


class GatedSite(web.TCPSite):
    """A TCP site whose connections pass through a ``ConnectionGate``."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, *, max_connections: int) -> None:
        super().__init__(runner, host, port)
        self._max_connections = max_connections

    @property
    def bound_port(self) -> int:
        """The port it listens on once started: the real one when asked for port 0."""
        assert isinstance(self._server, asyncio.Server), "not started"
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        assert isinstance(self._runner, web.AppRunner)  # what __init__ takes
        gate = ConnectionGate(server, in_request=self._runner.app[IN_REQUEST], max_connections=self._max_connections)
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(gate, self._host, self._port, backlog=BACKLOG, reuse_address=self._reuse_address)
