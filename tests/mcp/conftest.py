"""The MCP server against a real ``escalated serve --mcp`` on either backend,
driven by the official MCP client over both transports: stdio (a real
``escalated mcp`` subprocess talking HTTP to the server) and Streamable HTTP
(the server's own ``/mcp``, through its core).

One server per module and backend. Over Streamable HTTP each test connects
its own client. Over stdio the module keeps one ``escalated mcp`` session per
token and handshake open for its tests (``StdioSessions``): each such process
imports the MCP SDK, about 2 s of CPU, and the tests of a module file their
own escalations, so they do not interfere. An MCP client's task groups live
in the task that opened them, so those sessions run on an event loop of
their own in a thread, and a test's calls are handed to it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs
import httpx2
import pytest

from escalated.domain import scopes
from tests.conftest import fresh_db
from tests.support.server import ServerProcess

if TYPE_CHECKING:
    from mcp import Client, StdioServerParameters

# The MCP SDK is imported where it is used: under --dist loadfile every worker imports every
# conftest and test module at collection, and only the ones running these files need it.

CLIENT_NAME = "test-host"
POLICY = "mcp.review"


class StdioSessions:
    """``escalated mcp`` client sessions kept open for a module, one per URL, token and handshake
    mode, on an event loop of their own in a thread (an MCP client's task groups must be left in
    the task that entered them). ``session()`` gives a test a handle whose calls run there."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-stdio-sessions", daemon=True)
        self._thread.start()
        self._open: dict[tuple[str, str, str], tuple[OnItsLoop, asyncio.Event, concurrent.futures.Future]] = {}

    async def session(self, url: str, token: str, mode: str) -> OnItsLoop:
        key = (url, token, mode)
        if key not in self._open:
            ready: concurrent.futures.Future = concurrent.futures.Future()
            holding = asyncio.run_coroutine_threadsafe(_hold(url, token, mode, ready), self._loop)
            client, close = await asyncio.wrap_future(ready)
            self._open[key] = (OnItsLoop(client, self._loop), close, holding)
        return self._open[key][0]

    def close(self) -> None:
        """Ends every session (and so its ``escalated mcp``), then the loop; a session that
        ended with an error raises here, after the others are closed."""
        errors = []
        for _client, close, holding in self._open.values():
            self._loop.call_soon_threadsafe(close.set)
            try:
                holding.result(timeout=30)
            except Exception as error:  # each session is closed whatever the others did
                errors.append(error)
        self._open.clear()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
        if errors:
            raise errors[0]


async def _hold(url: str, token: str, mode: str, ready: concurrent.futures.Future) -> None:
    """Opens an ``escalated mcp`` session, hands it out through ``ready``, and keeps it open
    until the event it handed out with it is set."""
    from mcp import Client

    close = asyncio.Event()
    variable = "ESCALATED_TOKEN" if token.startswith("ain_user_") else "ESCALATED_API_KEY"
    try:
        async with Client(stdio_params(url, token, token_variable=variable), mode=mode, client_info=_client_info()) as client:
            ready.set_result((client, close))
            await close.wait()
    except BaseException as error:
        if not ready.done():
            ready.set_exception(error)
        raise


class OnItsLoop:
    """An MCP client whose session runs on another thread's event loop: each call runs there and
    is awaited here (the two calls the tests make)."""

    def __init__(self, client: Client, loop: asyncio.AbstractEventLoop) -> None:
        self._client, self._loop = client, loop

    async def call_tool(self, name: str, arguments: dict) -> Any:
        return await self._there(lambda: self._client.call_tool(name, arguments))

    async def list_tools(self) -> Any:
        return await self._there(self._client.list_tools)

    async def _there(self, call: Callable[[], Awaitable[Any]]) -> Any:
        async def run() -> Any:
            return await call()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run(), self._loop))


def _client_info():
    from mcp import types

    return types.Implementation(name=CLIENT_NAME, version="1.0")


@attrs.frozen
class Served:
    proc: ServerProcess
    agent_key: str  # escalations:write and :read only, named agent-bot
    reviewer: str  # the user token of rita, a reviewer
    admin_key: str  # all five scopes
    stdio: StdioSessions

    @property
    def url(self) -> str:
        return self.proc.url


@pytest.fixture(scope="module")
def served(request, backend, tmp_path_factory) -> Served:
    with fresh_db(request, backend, tmp_path_factory.mktemp("mcp")) as db:
        proc = ServerProcess(db=db, args=("--mcp",)).start()
        proc.cli("policy", "set", POLICY)
        agent_key = proc.cli("keys", "create", "--name", "agent-bot", "--scope", scopes.WRITE, "--scope", scopes.READ)
        reviewer = proc.cli("users", "add", "rita")
        assert proc.bootstrap_key
        stdio = StdioSessions()
        try:
            yield Served(proc=proc, agent_key=agent_key, reviewer=reviewer, admin_key=proc.bootstrap_key, stdio=stdio)
        finally:
            stdio.close()
            proc.stop()


@pytest.fixture(params=["stdio", "http"])
def transport(request) -> str:
    return request.param


def stdio_params(url: str, token: str, *, token_variable: str = "ESCALATED_API_KEY") -> StdioServerParameters:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=["-m", "escalated", "mcp"], env={"ESCALATED_URL": url, token_variable: token}
    )


@contextlib.asynccontextmanager
async def connect(
    served: Served | None, transport: str, token: str, *, mode: str = "auto", url: str | None = None
) -> AsyncIterator[Client]:
    """An MCP client session as ``token``: ``escalated mcp`` as a subprocess (the module's
    session of ``served`` for this token and mode, or one of its own for ``url``), or ``/mcp``
    (of ``served``, or of ``url``), a client of its own."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    info = _client_info()
    base = url or (served.url if served else "")
    if transport == "stdio" and served is not None and url is None:
        yield await served.stdio.session(base, token, mode)  # the module's session for this token and mode
        return
    if transport == "stdio":
        variable = "ESCALATED_TOKEN" if token.startswith("ain_user_") else "ESCALATED_API_KEY"
        async with Client(stdio_params(base, token, token_variable=variable), mode=mode, client_info=info) as client:
            yield client
        return
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        server = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(server, mode=mode, client_info=info) as client:
            yield client


def ask(**overrides: Any) -> dict:
    """request_decision's arguments; an override of ``...`` drops that one."""
    arguments = {
        "policy": POLICY,
        "question": "Delete the staging database?",
        "evidence": ["requested by the deploy agent", "last backup 2 h ago"],
        "choices": [{"id": "approve", "label": "Approve"}, {"id": "reject", "label": "Reject"}],
    }
    arguments.update(overrides)
    return {k: v for k, v in arguments.items() if v is not ...}


async def ok(client: Client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, arguments: dict) -> str:
    """The text of a failed call: a tool result with isError, never a protocol error."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    assert result.structured_content and "error" in result.structured_content
    return result.content[0].text
