"""The LangGraph example end to end: real server, real callback, real graph."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from typing import TYPE_CHECKING

import aiohttp
import pytest

from escalated.agent.client import EscalatedClient
from escalated.agent.receiver import make_receiver_app, start_receiver
from escalated.agent.signing import sign
from tests.conftest import fresh_db
from tests.support.server import ServerProcess
from tests.support.wait import eventually

if TYPE_CHECKING:
    from examples.langgraph_refund.refund_graph import Resumer

# Skipped where LangGraph is not installed, found without importing it: the example graph is
# imported in the tests that run it, so that under --dist loadfile only the worker running this
# file pays for LangGraph, not every worker at collection.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("langgraph") is None, reason="LangGraph is not installed")

SECRET = "whsec_langgraph_example"


@pytest.fixture(scope="module")
def example_server(request, backend, tmp_path_factory) -> ServerProcess:
    """One ``escalated serve`` per module and backend. The tests share it: each
    sets policy ``refunds.large`` (the example's) as it needs it before its
    own thread starts, and each thread has a run id of its own."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("example")) as db:
        proc = ServerProcess(db=db).start()
        yield proc
        proc.stop()


class CreateCounter:
    """Counts POST /escalations on the wire, and how many the server replayed."""

    def __init__(self) -> None:
        self.creates = 0
        self.replayed = 0
        self.trace = aiohttp.TraceConfig()
        self.trace.on_request_end.append(self._on_end)

    async def _on_end(self, _session, _ctx, params) -> None:
        if params.method == "POST" and params.url.path == "/escalations":
            self.creates += 1
            self.replayed += params.response.headers.get("Idempotent-Replayed") == "true"


async def run_until_paused(client: EscalatedClient, resumer: Resumer, receiver_url: str, thread_id: str) -> str:
    from examples.langgraph_refund.refund_graph import build_graph, thread_config

    graph = resumer.graph = build_graph(client, resume_url=receiver_url + "/resume", secret=SECRET)
    state = await graph.ainvoke({"order_id": "o-981", "amount_eur": 1200.0}, thread_config(thread_id))
    return state["__interrupt__"][0].value["escalationId"]


def finished_future() -> tuple[asyncio.Future, Resumer]:
    from examples.langgraph_refund.refund_graph import Resumer

    finished: asyncio.Future = asyncio.get_running_loop().create_future()
    return finished, Resumer(on_finished=lambda _thread, final: finished.set_result(final))


async def test_reviewer_decision_resumes_the_paused_thread_with_one_escalation(example_server):
    example_server.cli("policy", "set", "refunds.large")
    reviewer_token = example_server.cli("users", "add", "alice")
    counter = CreateCounter()
    finished, resumer = finished_future()
    async with (
        aiohttp.ClientSession(trace_configs=[counter.trace]) as session,
        EscalatedClient(example_server.url, example_server.bootstrap_key, session=session) as agent,
        await start_receiver(make_receiver_app(resumer, secret=SECRET)) as receiver,
    ):
        escalation_id = await run_until_paused(agent, resumer, receiver.url, "thread-42")
        assert not finished.done()
        async with EscalatedClient(example_server.url, reviewer_token) as reviewer:
            await reviewer.decide(escalation_id, choice="approve", reason="loyal customer")
        final = await asyncio.wait_for(finished, timeout=30)
        escalations = (await agent.list_escalations(run_id="thread-42"))["data"]

    assert final["outcome"] == "refunded 1200.00 EUR"
    assert final["decision"]["choice"] == "approve"
    assert final["decision"]["answeredBy"] == "alice"
    assert final["escalation_id"] == escalation_id
    # The review node ran twice (pause, then resume) but the server made one escalation.
    assert (counter.creates, counter.replayed) == (2, 1)
    assert [e["id"] for e in escalations] == [escalation_id]


async def test_sla_breach_resumes_the_thread_with_the_default_choice(example_server):
    example_server.cli("policy", "set", "refunds.large", "--sla", "1s", "--default-choice", "deny")
    finished, resumer = finished_future()
    async with (
        EscalatedClient(example_server.url, example_server.bootstrap_key) as agent,
        await start_receiver(make_receiver_app(resumer, secret=SECRET)) as receiver,
    ):
        await run_until_paused(agent, resumer, receiver.url, "thread-breach")
        final = await asyncio.wait_for(finished, timeout=30)

    assert final["outcome"] == "refund denied by system"
    assert final["decision"]["resolvedBy"] == "timeout"


async def test_a_repeated_callback_does_not_resume_a_finished_thread(example_server):
    from examples.langgraph_refund.refund_graph import thread_config

    example_server.cli("policy", "set", "refunds.large")
    finished, resumer = finished_future()
    async with (
        EscalatedClient(example_server.url, example_server.bootstrap_key) as agent,
        await start_receiver(make_receiver_app(resumer, secret=SECRET)) as receiver,
    ):
        escalation_id = await run_until_paused(agent, resumer, receiver.url, "thread-again")
        await agent.decide(escalation_id, choice="deny")
        final = await asyncio.wait_for(finished, timeout=30)

    # A restarted receiver has forgotten the delivery ids it saw; the same
    # callback (here: a late "approve" for the same escalation) must not
    # resume the finished thread again.
    body = json.dumps(
        {
            "escalationId": escalation_id,
            "runId": "thread-again",
            "agentId": "refund-agent",
            "policy": "refunds.large",
            "choice": "approve",
            "resolvedBy": "human",
            "answeredBy": "mallory",
            "answeredAt": "2026-11-22T10:15:00.123Z",
        }
    ).encode()
    headers = {"x-service-event": "escalation.decided", "x-service-delivery": "dlv_x", "x-service-signature": sign(body, SECRET)}
    async with (
        await start_receiver(make_receiver_app(resumer, secret=SECRET)) as fresh,
        aiohttp.ClientSession() as session,
        session.post(fresh.url + "/resume", data=body, headers=headers) as resp,
    ):
        # 200: had the resumer run the graph again, on_finished would have raised (500).
        assert resp.status == 200
    state = await resumer.graph.aget_state(thread_config("thread-again"))
    assert state.values["outcome"] == final["outcome"] == f"refund denied by {final['decision']['answeredBy']}"


async def test_a_cancellation_with_cancel_callback_resumes_the_thread_as_cancelled(example_server):
    example_server.cli("policy", "set", "refunds.large", "--cancel-callback")
    finished, resumer = finished_future()
    async with (
        EscalatedClient(example_server.url, example_server.bootstrap_key) as agent,
        await start_receiver(make_receiver_app(resumer, secret=SECRET)) as receiver,
    ):
        escalation_id = await run_until_paused(agent, resumer, receiver.url, "thread-cancel-cb")
        await agent.cancel(escalation_id, reason="customer withdrew")
        final = await asyncio.wait_for(finished, timeout=30)
        [delivery] = await agent.deliveries(escalation_id)

    assert final["outcome"] == "refund cancelled by key:bootstrap: customer withdrew"
    assert delivery["event"] == "escalation.cancelled"


async def test_a_cancellation_that_sends_no_callback_resumes_the_thread_through_the_wait_fallback(example_server):
    from examples.langgraph_refund.refund_graph import resume_by_waiting

    example_server.cli("policy", "set", "refunds.large")  # no cancel_callback: the seed's rule, no callback
    finished, resumer = finished_future()
    async with (
        EscalatedClient(example_server.url, example_server.bootstrap_key) as agent,
        await start_receiver(make_receiver_app(resumer, secret=SECRET)) as receiver,
    ):
        escalation_id = await run_until_paused(agent, resumer, receiver.url, "thread-cancel-wait")
        fallback = asyncio.ensure_future(resume_by_waiting(agent, resumer, escalation_id))
        await agent.cancel(escalation_id)
        final = await asyncio.wait_for(finished, timeout=30)
        await fallback
        assert await agent.deliveries(escalation_id) == []

    assert final["outcome"] == "refund cancelled by key:bootstrap"


async def test_the_run_script_without_a_receiver_finishes_through_wait(example_server, monkeypatch):
    from examples.langgraph_refund.run import run as run_script

    example_server.cli("policy", "set", "refunds.large")
    monkeypatch.setenv("ESCALATED_URL", example_server.url)
    monkeypatch.setenv("ESCALATED_API_KEY", example_server.bootstrap_key)
    running = asyncio.ensure_future(
        run_script(order_id="o-7", amount_eur=500.0, thread_id="thread-no-receiver", receiver_port=0, receiver=False)
    )
    async with EscalatedClient(example_server.url, example_server.bootstrap_key) as reviewer:
        found = await eventually(
            lambda: listed(reviewer, "thread-no-receiver"), timeout_s=30, what="the run's escalation"
        )
        assert found[0]["resume"] is None
        await reviewer.decide(found[0]["id"], choice="approve")
    final = await asyncio.wait_for(running, timeout=30)
    assert final["outcome"] == "refunded 500.00 EUR"


async def listed(reviewer: EscalatedClient, run_id: str) -> list:
    return (await reviewer.list_escalations(run_id=run_id))["data"]
