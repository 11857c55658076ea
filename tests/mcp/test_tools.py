"""CONTRACT §14 over both transports and both backends: an agent asks, polls,
and gets the human's decision; every failure is a tool result with isError
and the problem's words, and the session goes on."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from escalated.domain.nul import NUL_MESSAGE
from tests.mcp.conftest import CLIENT_NAME, POLICY, ask, connect, ok, refused
from tests.support.api import Api, unique


async def decide_over_http(served, escalation_id: str, choice: str, reason: str) -> None:
    async with aiohttp.ClientSession() as session:
        status, body = await Api(served.url, served.reviewer, session).decide(escalation_id, choice, reason=reason)
        assert status == 200, body


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28, and the 2025-11-25 handshake
async def test_request_then_pending_then_the_reviewers_decision(served, transport, mode):
    async with connect(served, transport, served.agent_key, mode=mode) as client:
        asked = await ok(client, "request_decision", ask())
        assert asked["status"] == "open" and asked["deadlineAt"] is None
        escalation_id = asked["escalationId"]
        assert asked["webUrl"] == f"{served.url}/app/escalations/{escalation_id}"

        pending = await ok(client, "get_decision", {"escalationId": escalation_id, "waitSeconds": 0.2})
        assert pending == {"escalationId": escalation_id, "status": "open"}

        await decide_over_http(served, escalation_id, "reject", "not before the release")
        decided = await ok(client, "get_decision", {"escalationId": escalation_id, "waitSeconds": 0})
    assert decided["status"] == "resolved"
    assert decided["choice"] == "reject" and decided["reason"] == "not before the release"
    assert decided["resolvedBy"] == "human" and decided["answeredBy"] == "rita" and decided["answeredAt"]


async def test_a_waiting_get_decision_answers_once_the_reviewer_decides(served, transport):
    async with connect(served, transport, served.agent_key) as client:
        escalation_id = (await ok(client, "request_decision", ask()))["escalationId"]
        waiting = asyncio.ensure_future(ok(client, "get_decision", {"escalationId": escalation_id, "waitSeconds": 25}))
        await decide_over_http(served, escalation_id, "approve", "fine")
        decided = await asyncio.wait_for(waiting, 40)
    assert decided["status"] == "resolved" and decided["choice"] == "approve"


async def test_the_same_idempotency_key_returns_the_same_escalation(served, transport):
    key = unique("idem")
    async with connect(served, transport, served.agent_key) as client:
        first = await ok(client, "request_decision", ask(idempotencyKey=key))
        again = await ok(client, "request_decision", ask(idempotencyKey=key))
        assert again["escalationId"] == first["escalationId"]
        changed = await refused(client, "request_decision", ask(idempotencyKey=key, question="Something else?"))
        listed = await ok(client, "list_escalations", {"policy": POLICY, "limit": 200})
    assert "idempotency" in changed.lower()
    mine = [e for e in listed["escalations"] if e["id"] == first["escalationId"]]
    assert mine and mine[0]["runId"] == f"mcp-{key}"


async def test_agent_id_is_the_mcp_clients_name_unless_given(served, transport):
    async with connect(served, transport, served.agent_key) as client:
        named = await ok(client, "request_decision", ask())
        given = await ok(client, "request_decision", ask(agentId="deploy-agent", runId="run-7"))
        listed = {e["id"]: e for e in (await ok(client, "list_escalations", {"limit": 10}))["escalations"]}
    assert listed[named["escalationId"]]["agentId"] == CLIENT_NAME
    assert listed[given["escalationId"]]["agentId"] == "deploy-agent"
    assert listed[given["escalationId"]]["runId"] == "run-7"


async def test_agent_id_is_mcp_when_the_client_gives_no_name(served):
    """A client whose initialize names no one (an empty name) files as ``mcp``."""
    import httpx2
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {served.agent_key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        server = streamable_http_client(f"{served.url}/mcp", http_client=http)
        async with Client(server, client_info=types.Implementation(name="", version="1.0")) as client:
            filed = await ok(client, "request_decision", ask())
            listed = {e["id"]: e for e in (await ok(client, "list_escalations", {"limit": 10}))["escalations"]}
    assert listed[filed["escalationId"]]["agentId"] == "mcp"


async def test_failures_are_tool_errors_in_the_problems_words_and_the_session_goes_on(served, transport):
    async with connect(served, transport, served.agent_key) as client:
        assert "no policy 'no.such'" in await refused(client, "request_decision", ask(policy="no.such"))
        assert "escalations:decide" in await refused(client, "decide", {"escalationId": "esc_x", "choice": "approve"})
        assert "not found" in (await refused(client, "get_decision", {"escalationId": "esc_nope", "waitSeconds": 0})).lower()
        missing = await refused(client, "request_decision", ask(question=...))
        assert "'question' is a required property" in missing
        too_long = await refused(client, "get_decision", {"escalationId": "esc_x", "waitSeconds": 26})
        assert "waitSeconds" in too_long
        assert NUL_MESSAGE in await refused(client, "request_decision", ask(question="a\x00b"))
        # and the session still works
        assert (await ok(client, "request_decision", ask()))["status"] == "open"


async def test_a_long_wrong_argument_gives_a_short_error(served):
    async with connect(served, "http", served.agent_key) as client:
        result = await client.call_tool("request_decision", ask(evidence="x" * 100_000, **{"y" * 10_000: 1}))
    assert result.is_error and len(result.content[0].text) < 2_000
    assert "evidence" in result.content[0].text and len(str(result.structured_content)) < 2_000


async def test_a_server_that_is_down_is_a_tool_error_not_a_dead_session():
    down = "http://127.0.0.1:9"  # the discard port: nothing listens there
    async with connect(None, "stdio", "ain_live_" + "x" * 40, url=down) as client:
        listed = await client.list_tools()  # unknown scopes: every tool, so a call can say what is wrong
        assert {t.name for t in listed.tools} >= {"request_decision", "get_decision"}
        for _ in range(2):
            text = await refused(client, "get_decision", {"escalationId": "esc_x", "waitSeconds": 0})
            assert "Server unreachable" in text and "127.0.0.1:9" in text


async def test_a_refused_token_is_a_tool_error_over_stdio(served):
    async with connect(served, "stdio", "ain_live_" + "x" * 40) as client:
        text = await refused(client, "request_decision", ask())
    assert "Unauthenticated" in text and "malformed token" in text


async def test_an_agent_key_is_not_offered_decide_and_a_reviewer_token_is(served, transport):
    async with connect(served, transport, served.agent_key) as client:
        agent_tools = {t.name for t in (await client.list_tools()).tools}
    async with connect(served, transport, served.reviewer) as client:
        reviewer_tools = {t.name for t in (await client.list_tools()).tools}
    assert agent_tools == {"request_decision", "get_decision", "list_escalations"}
    assert reviewer_tools == {"get_decision", "list_escalations", "decide", "cancel_escalation"}


@pytest.mark.parametrize(
    ("granted", "listed"),
    [
        (("escalations:decide",), {"decide"}),
        (("escalations:cancel",), {"cancel_escalation"}),
        (("escalations:acknowledge",), set()),
    ],
    ids=["decide-only", "cancel-only", "acknowledge-only"],
)
async def test_each_tool_is_listed_by_its_own_scope(served, granted, listed):
    """decide needs escalations:decide and cancel_escalation escalations:cancel, each alone."""
    flags = [arg for scope in granted for arg in ("--scope", scope)]
    key = served.proc.cli("keys", "create", "--name", unique("scoped"), *flags)
    async with connect(served, "http", key) as client:
        assert {t.name for t in (await client.list_tools()).tools} == listed


async def test_a_reviewer_clears_their_queue_with_decide_and_cancel(served, transport):
    async with connect(served, transport, served.admin_key) as agent:
        first = (await ok(agent, "request_decision", ask()))["escalationId"]
        second = (await ok(agent, "request_decision", ask()))["escalationId"]
    async with connect(served, transport, served.reviewer) as reviewer:
        queue = {e["id"] for e in (await ok(reviewer, "list_escalations", {"status": "open", "limit": 200}))["escalations"]}
        assert {first, second} <= queue
        decided = await ok(reviewer, "decide", {"escalationId": first, "choice": "approve", "reason": "ok"})
        cancelled = await ok(reviewer, "cancel_escalation", {"escalationId": second, "reason": "stale"})
        again = await refused(reviewer, "decide", {"escalationId": first, "choice": "reject"})
    assert decided["status"] == "resolved" and decided["resolution"]["answeredBy"] == "rita"
    assert cancelled["status"] == "cancelled"
    assert "resolved" in again  # 409 invalid_state, in its words


async def test_tools_have_input_schemas_and_results_are_structured(served, transport):
    async with connect(served, transport, served.admin_key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("request_decision", ask())
    assert set(tools) == {"request_decision", "get_decision", "list_escalations", "decide", "cancel_escalation"}
    assert tools["request_decision"].input_schema["required"] == ["policy", "question", "evidence", "choices"]
    assert tools["get_decision"].input_schema["properties"]["waitSeconds"]["maximum"] == 25
    assert all(t.output_schema for t in tools.values())
    assert result.structured_content["status"] == "open"
    assert '"escalationId"' in result.content[0].text  # the same, as text, for hosts that read only text
