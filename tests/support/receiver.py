"""The suite's receiver: a real HTTP server for callbacks and webhook
notifications, on port 0 in the test's own loop."""

from __future__ import annotations

import asyncio
import contextlib
import os

import attrs
from aiohttp import web


@attrs.frozen
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@attrs.define
class Receiver:
    """Answers each request with the next scripted status (then ``status``) and records it.

    ``headers`` go with every answer (a redirect's Location, a 429's
    Retry-After). ``hold``: when set to an event, each answer waits for it
    (an attempt stays in flight until the test releases it). ``host``: the
    address it listens on (``url_on`` names it by another spelling).
    ``peer_ports``: the client port of each request, in order (which
    process sent it: ``sender_pid``).
    """

    received: list[Received] = attrs.field(factory=list)
    hold: asyncio.Event | None = None
    script: list[int] = attrs.field(factory=list)
    status: int = 200
    headers: dict[str, str] = attrs.field(factory=dict)
    host: str = "127.0.0.1"
    peer_ports: list[int] = attrs.field(factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None
    _changed: asyncio.Event = attrs.field(factory=asyncio.Event)

    @property
    def url(self) -> str:
        return self.url_on(self.host)

    def url_on(self, host: str) -> str:
        """This receiver's URL with ``host`` for its address (a name, or another spelling of it)."""
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}/resume"

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.peer_ports.append(request.transport.get_extra_info("peername")[1])
        self.received.append(Received(request.path, {k.lower(): v for k, v in request.headers.items()}, body))
        self._changed.set()
        if self.hold is not None:
            await self.hold.wait()
        status = self.script.pop(0) if self.script else self.status
        return web.json_response({"ok": status < 300}, status=status, headers=self.headers or None)

    async def start(self) -> Receiver:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self.hold is not None:
            self.hold.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def wait_for(self, count: int, *, timeout_s: float = 15.0) -> list[Received]:
        async with asyncio.timeout(timeout_s):
            while len(self.received) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.received


def sender_pid(port: int, pids: list[int]) -> int | None:
    """Which of ``pids`` owns the local TCP socket on ``port`` (Linux /proc):
    the process that sent a request the receiver saw from that port."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(fields[9])
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}").removeprefix("socket:[").removesuffix("]") in inodes:
                    return pid
    return None
