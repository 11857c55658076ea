"""One real ``escalated serve`` per backend for all the adapter tests, and a reviewer over HTTP.

Every adapter test runs its framework's real runner with the framework's own
test model against this server; a reviewer (a user token, over plain HTTP
with ``tests.support.api.Api``) decides while the run waits. Policies:
``tools.refund`` (no SLA), ``tools.late`` (1 s SLA, default ``approve``) and
``tools.late-no`` (1 s SLA, default ``reject``). Each test uses run ids of
its own, so tests share the server without seeing each other's escalations.
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from escalated.agent.client import EscalatedClient
from tests.conftest import BACKENDS, fresh_db
from tests.support.api import Api, unique
from tests.support.server import ServerProcess


@pytest.fixture(autouse=True)
def _no_model_provider_calls(monkeypatch):
    # The Agents SDK exports traces to OpenAI unless told not to: nothing leaves the machine.
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    monkeypatch.delenv("ESCALATED_URL", raising=False)
    monkeypatch.delenv("ESCALATED_API_KEY", raising=False)


@pytest.fixture(scope="package", params=BACKENDS)
def adapters_backend(request) -> str:
    """``sqlite`` or ``postgres``, for the whole package: its modules share one server per backend."""
    return request.param


@pytest.fixture(scope="package")
def adapter_server(request, adapters_backend, tmp_path_factory):
    with fresh_db(request, adapters_backend, tmp_path_factory.mktemp("adapters")) as db:
        proc = ServerProcess(db=db).start()
        proc.cli("policy", "set", "tools.refund")
        proc.cli("policy", "set", "tools.late", "--sla", "1s", "--default-choice", "approve")
        proc.cli("policy", "set", "tools.late-no", "--sla", "1s", "--default-choice", "reject")
        yield proc
        proc.stop()


@pytest.fixture(scope="package")
def reviewer_token(adapter_server) -> str:
    return adapter_server.cli("users", "add", "alice")


@pytest.fixture
async def client(adapter_server):
    """The agent's client; quick create retries so a dead server is known in well under a second."""
    async with EscalatedClient(adapter_server.url, adapter_server.bootstrap_key, retry_backoff_s=0.05) as agent_client:
        yield agent_client


@pytest.fixture
async def reviewer(adapter_server, reviewer_token):
    async with aiohttp.ClientSession() as session:
        yield Reviewer(Api(adapter_server.url, reviewer_token, session))


@pytest.fixture
def run_id() -> str:
    return unique("run")


class Reviewer:
    """A human deciding over HTTP, as the TUI or the web app would."""

    def __init__(self, api: Api) -> None:
        self.api = api

    async def open_for(self, run_id: str, *, count: int = 1, timeout_s: float = 30.0) -> list[dict]:
        """The run's open escalations once there are ``count`` of them (oldest first)."""
        async with asyncio.timeout(timeout_s):
            while True:
                status, body, _ = await self.api.call("GET", f"/escalations?runId={run_id}&status=open&order=asc")
                assert status == 200, body
                if len(body["data"]) >= count:
                    return body["data"]
                await asyncio.sleep(0.05)

    async def decide(self, escalation_id: str, choice: str, reason: str | None = None) -> dict:
        status, body = await self.api.decide(escalation_id, choice, **({"reason": reason} if reason else {}))
        assert status == 200, body
        return body

    async def all_for(self, run_id: str) -> list[dict]:
        status, body, _ = await self.api.call("GET", f"/escalations?runId={run_id}&order=asc")
        assert status == 200, body
        return body["data"]
