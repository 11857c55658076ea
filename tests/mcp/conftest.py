"""The MCP server against a real ``escalated serve --mcp`` on either backend,
driven by the official MCP client over both transports: stdio (a real
``escalated mcp`` subprocess talking HTTP to the server) and Streamable HTTP
(the server's own ``/mcp``, through its core).

One server per module and backend; each test connects its own client (an
MCP client's task groups live in the task that opened them).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
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


@attrs.frozen
class Served:
    proc: ServerProcess
    agent_key: str  # escalations:write and :read only, named agent-bot
    reviewer: str  # the user token of rita, a reviewer
    admin_key: str  # all five scopes

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
        yield Served(proc=proc, agent_key=agent_key, reviewer=reviewer, admin_key=proc.bootstrap_key)
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
    """An MCP client session as ``token``: ``escalated mcp`` as a subprocess, or ``/mcp``
    (of ``served``, or of ``url``)."""
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client

    info = types.Implementation(name=CLIENT_NAME, version="1.0")
    base = url or (served.url if served else "")
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
