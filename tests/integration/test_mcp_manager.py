"""``serve --mcp``: the SDK's session manager runs in a task of its own. If
that task ends while the server runs, ``/mcp`` starts a new manager instead
of answering 500 until a restart; if the manager cannot be started again,
``/mcp`` answers 503 ``unavailable`` with ``Retry-After`` (CONTRACT §7).

The real app in process (its task is on the server's loop, where the test
can end it), on each backend; then the manager with the real SDK."""

from __future__ import annotations

import asyncio
import json

import pytest

from escalated.errors import Unavailable
from escalated.http.statuses import status_of
from tests.conftest import fresh_db
from tests.integration.conftest import LiveServer

# The MCP SDK and the app's manager of it are imported in the tests: under --dist loadfile every
# worker imports every test module at collection, and only one of them runs this file.

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TASK = "mcp-manager"


@pytest.fixture(scope="module")
def live_mcp(request, backend, tmp_path_factory) -> LiveServer:
    with fresh_db(request, backend, tmp_path_factory.mktemp("mcp-manager")) as db:
        server = LiveServer(db, mcp=True).start()
        yield server
        server.stop()


def tool_names(live: LiveServer, key: str) -> list[str]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    resp = live.api.post("/mcp", token=key, body=json.dumps(message).encode(), headers=HEADERS)
    assert resp.status == 200, resp.body[:500]
    return sorted(t["name"] for t in resp.json()["result"]["tools"])


def manager_tasks(live: LiveServer) -> list[asyncio.Task]:
    async def find() -> list[asyncio.Task]:
        return [t for t in asyncio.all_tasks() if t.get_name() == TASK and not t.done()]

    return live._run(find)


def end_manager_task(live: LiveServer) -> None:
    """Cancel the manager's task on the server's loop and wait for it to end."""

    async def end() -> None:
        [task] = [t for t in asyncio.all_tasks() if t.get_name() == TASK]
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    live._run(end)


def test_mcp_answers_again_after_its_session_managers_task_ended(live_mcp):
    key = live_mcp.key(name="mcp-bot")
    tools = tool_names(live_mcp, key)
    assert "request_decision" in tools
    [before] = manager_tasks(live_mcp)
    end_manager_task(live_mcp)
    assert manager_tasks(live_mcp) == []
    assert tool_names(live_mcp, key) == tools  # was a 500 from then on
    [after] = manager_tasks(live_mcp)
    assert after is not before
    assert tool_names(live_mcp, key) == tools  # the new one serves the next requests too
    assert manager_tasks(live_mcp) == [after]


async def test_a_manager_that_cannot_start_again_is_503_unavailable():
    """The SDK runs a manager once: made to start the same one again, the restart fails."""
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from escalated.http.mcp import McpManager

    once = StreamableHTTPSessionManager(app=Server("test"), stateless=True, json_response=True)
    manager = McpManager(lambda: once)
    await manager.start()
    assert await manager.running() is once
    [task] = [t for t in asyncio.all_tasks() if t.get_name() == TASK]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    with pytest.raises(Unavailable) as refused:
        await manager.running()
    assert status_of(refused.value) == 503 and refused.value.extra == {"retry_after_s": 1}
    await manager.stop()

