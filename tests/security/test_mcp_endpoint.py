"""``serve --mcp``: ``/mcp`` obeys the rules of every other route — the same
bearer tokens (401), the per-token rate limit (429), the body limit (413),
the media type (415), JSON syntax (400), workspaces and routing (a tool
error, as 404 is elsewhere), and the NUL rule — all as problem+json or as
tool errors, never a 500. Raw JSON-RPC over stdlib HTTP, against a real
``escalated serve --mcp`` on each backend."""

from __future__ import annotations

import json
import time
from typing import Any

import attrs
import pytest

from escalated.domain import scopes
from escalated.domain.nul import NUL_MESSAGE
from tests.conftest import fresh_db
from tests.security.conftest import cli_all, create
from tests.support.http import Http, Response
from tests.support.wait import eventually
from tests.security.test_limits import LIMIT, QUICK_S, raw_request
from tests.support.server import ServerProcess, start_server

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
QUESTION = {"policy": "sec.open", "question": "Ship it?", "evidence": ["green"], "choices": [{"id": "yes", "label": "Yes"}]}


@attrs.frozen
class McpServed:
    proc: ServerProcess
    http: Http
    key: str  # all scopes, workspace default
    agent: str  # write and read only
    other_workspace: str  # all scopes, workspace elsewhere


@pytest.fixture(scope="module")
def mcp_served(request, backend, tmp_path_factory) -> McpServed:
    with fresh_db(request, backend, tmp_path_factory.mktemp("sec-mcp")) as db:
        proc = ServerProcess(db=db, args=("--mcp", "--retry-schedule", "1h")).start()
        proc.cli("workspaces", "create", "elsewhere")
        _, agent, other = cli_all(
            proc,
            ("policy", "set", "sec.open"),
            ("keys", "create", "--scope", scopes.WRITE, "--scope", scopes.READ),
            ("keys", "create", "--workspace", "elsewhere"),
        )
        yield McpServed(proc, Http(proc.url), proc.bootstrap_key, agent, other)
        proc.kill()


@pytest.fixture(scope="module")
def limited(tmp_path_factory) -> McpServed:
    """As test_limits' rate-limited server: the bucket is the process's own, whatever the backend."""
    proc = start_server(tmp_path_factory.mktemp("sec-mcp-rate"), "--mcp", "--rate-limit", "2/s")
    yield McpServed(proc, Http(proc.url), proc.bootstrap_key, agent="", other_workspace="")
    proc.stop()


def rpc(served: McpServed, token: str | None, method: str, params: dict | None = None, **kw: Any) -> Response:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}
    return served.http.post("/mcp", token=token, body=json.dumps(message).encode(), headers={**HEADERS, **kw.pop("headers", {})}, **kw)


def call(served: McpServed, token: str, tool: str, arguments: dict) -> dict:
    resp = rpc(served, token, "tools/call", {"name": tool, "arguments": arguments})
    assert resp.status == 200, resp.body[:300]
    return resp.json()["result"]


def test_mcp_without_a_valid_token_is_401_with_www_authenticate(mcp_served):
    for token in (None, "not-a-token", "ain_live_" + "x" * 40):
        resp = rpc(mcp_served, token, "tools/list")
        resp.problem(401, "unauthenticated")
        assert resp.headers["www-authenticate"].startswith("Bearer")


def test_a_revoked_key_is_401_on_its_next_mcp_request(mcp_served):
    key = mcp_served.proc.cli("keys", "create", "--name", "short-lived")
    assert rpc(mcp_served, key, "tools/list").status == 200
    key_id = next(k["id"] for k in mcp_served.http.get("/api-keys", token=mcp_served.key).json()["data"] if k["name"] == "short-lived")
    mcp_served.proc.cli("keys", "revoke", key_id)
    rpc(mcp_served, key, "tools/list").problem(401, "unauthenticated")


def test_mcp_is_rate_limited_per_token_with_retry_after(limited):
    other = limited.proc.cli("keys", "create")
    statuses = []
    for _ in range(30):  # far beyond 2/s with a burst of 2, even on a slow machine
        resp = rpc(limited, limited.key, "tools/list")
        statuses.append(resp.status)
        if resp.status == 429:
            break
    assert statuses[0] == 200 and statuses[-1] == 429, statuses
    resp.problem(429, "rate_limited")
    retry_after = int(resp.headers["retry-after"])
    assert 1 <= retry_after <= 2
    assert rpc(limited, other, "tools/list").status == 200  # another token, its own bucket
    eventually(lambda: rpc(limited, limited.key, "tools/list").status == 200, timeout_s=retry_after + 3, interval_s=0.25, what="the bucket to refill")


def test_a_declared_oversize_mcp_body_is_refused_before_it_is_sent(mcp_served):
    head = (
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {mcp_served.key}\r\nContent-Length: {1024**3}\r\n\r\n"
    )
    status, took_s = raw_request(mcp_served.proc.url, head, b"{")
    assert status.startswith(b"HTTP/1.1 413"), status
    assert took_s < QUICK_S


def test_an_mcp_body_one_byte_over_the_limit_is_413_and_one_at_the_limit_is_read(mcp_served):
    for size, expected in ((LIMIT + 1, 413), (LIMIT, 200)):
        resp = mcp_served.http.post("/mcp", token=mcp_served.key, body=_call_of_size(size), headers=HEADERS)
        assert resp.status == expected, (size, resp.body[:200])
        if expected == 413:
            resp.problem(413, "payload_too_large")
        else:  # read, and refused by the tool in the problem's words: the question is too long
            result = resp.json()["result"]
            assert result["isError"] and "question" in result["content"][0]["text"]


def _call_of_size(size: int) -> bytes:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "request_decision", "arguments": {**QUESTION, "question": ""}}}
    raw = json.dumps(message).encode()
    message["params"]["arguments"]["question"] = "q" * (size - len(raw))
    raw = json.dumps(message).encode()
    assert len(raw) == size
    return raw


def test_an_mcp_body_that_is_not_json_is_415_or_400(mcp_served):
    resp = mcp_served.http.post("/mcp", token=mcp_served.key, body=b"{}", headers={"Content-Type": "text/plain"})
    resp.problem(415, "unsupported_media_type")
    for raw in (b"not json", b"[" * 120_000 + b"]" * 120_000):
        started = time.monotonic()
        mcp_served.http.post("/mcp", token=mcp_served.key, body=raw, headers=HEADERS).problem(400, "invalid_json")
        assert time.monotonic() - started < QUICK_S


def test_nul_in_tool_arguments_is_a_tool_error_naming_the_rule(mcp_served):
    before = mcp_served.http.get("/escalations?limit=200", token=mcp_served.key).json()["data"]
    for field in ("question", "policy", "agentId", "runId"):
        result = call(mcp_served, mcp_served.key, "request_decision", {**QUESTION, field: "a\x00b"})
        assert result["isError"], (field, result)
        assert NUL_MESSAGE in result["content"][0]["text"] and field in result["content"][0]["text"], result
    assert mcp_served.http.get("/escalations?limit=200", token=mcp_served.key).json()["data"] == before
    result = call(mcp_served, mcp_served.key, "get_decision", {"escalationId": "esc_\x00", "waitSeconds": 0})
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "not_found"
    assert "Traceback" not in "".join(mcp_served.proc.output)


def test_another_workspaces_escalation_is_not_found_over_mcp(mcp_served):
    esc = create(mcp_served.http, mcp_served.key, "sec.open")
    result = call(mcp_served, mcp_served.other_workspace, "get_decision", {"escalationId": esc["id"], "waitSeconds": 0})
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "not_found"
    listed = call(mcp_served, mcp_served.other_workspace, "list_escalations", {"limit": 200})["structuredContent"]
    assert esc["id"] not in {e["id"] for e in listed["escalations"]}
    result = call(mcp_served, mcp_served.other_workspace, "cancel_escalation", {"escalationId": esc["id"]})
    assert result["isError"] and mcp_served.http.get(f"/escalations/{esc['id']}", token=mcp_served.key).json()["status"] == "open"


def test_a_tool_the_token_is_not_offered_is_refused_when_called_anyway(mcp_served):
    names = {t["name"] for t in rpc(mcp_served, mcp_served.agent, "tools/list").json()["result"]["tools"]}
    assert "decide" not in names and "cancel_escalation" not in names
    esc = create(mcp_served.http, mcp_served.key, "sec.open")
    result = call(mcp_served, mcp_served.agent, "decide", {"escalationId": esc["id"], "choice": "approve"})
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "insufficient_scope"
    assert scopes.DECIDE in result["content"][0]["text"]
    assert mcp_served.http.get(f"/escalations/{esc['id']}", token=mcp_served.key).json()["status"] == "open"


def test_mcp_answers_only_post(mcp_served):
    for method in ("GET", "DELETE", "PUT"):
        resp = mcp_served.http.request(method, "/mcp", token=mcp_served.key)
        resp.problem(405, "method_not_allowed")
