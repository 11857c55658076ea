"""The security suite runs against the real ``escalated serve`` subprocess,
once on each backend (``served`` is parametrized by tests/conftest.py's ``backend``).

``Http`` (tests/support/http.py) is the suite's raw stdlib client; it
remembers every response, so a test can scan what the API ever said. Receivers
are real aiohttp servers on port 0.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
import pytest
from aiohttp import web

from tests.support.api import escalation_body
from tests.conftest import fresh_db
from tests.support.http import Http
from tests.support.server import ServerProcess
from tests.support.wait import eventually

def create(http: Http, token: str, policy: str, **overrides: Any) -> dict:
    resp = http.post("/escalations", token=token, json_body=escalation_body(policy, **overrides))
    assert resp.status == 201, resp.body
    return resp.json()




@attrs.define
class Receiver:
    """A real aiohttp receiver on port 0: answers from ``script`` first, then ``status``."""

    status: int = 200
    script: list[int] = attrs.field(factory=list)
    headers: dict = attrs.field(factory=dict)
    host: str = "127.0.0.1"
    received: list[tuple[dict, bytes]] = attrs.field(factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None

    async def start(self) -> Receiver:
        async def handle(request: web.Request) -> web.Response:
            self.received.append((dict(request.headers), await request.read()))
            status = self.script.pop(0) if self.script else self.status
            return web.Response(status=status, headers=self.headers, text="{}", content_type="application/json")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    def url(self, host: str | None = None) -> str:
        host = host or self.host
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}/hook"

    async def wait_for(self, n: int, *, timeout_s: float = 15.0) -> None:
        await eventually(lambda: len(self.received) >= n, timeout_s=timeout_s, what=f"{n} requests at the receiver")

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@attrs.frozen
class Served:
    proc: ServerProcess
    http: Http
    key: str  # the bootstrap all-scope key of workspace default


@pytest.fixture(scope="module")
def served(request, backend, tmp_path_factory) -> Served:
    """One ``escalated serve`` per module and backend, policy ``sec.open`` (no
    reviewers, no SLA); a failed callback waits an hour for its next attempt."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("sec")) as db:
        args = ("--log-level", "debug", "--retry-schedule", "1h", "--retry-for", "2h")
        proc = ServerProcess(db=db, args=args).start()
        proc.cli("policy", "set", "sec.open")
        yield Served(proc=proc, http=Http(proc.url), key=proc.bootstrap_key)
        proc.kill()  # a clean shutdown is not what these tests are about


def cli_all(proc: ServerProcess, *commands: tuple[str, ...]) -> list[str]:
    """Run independent CLI commands side by side (each is a Python start-up)."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: proc.cli(*args), commands))
