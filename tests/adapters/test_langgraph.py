"""The LangGraph adapter: a real graph with a checkpointer, a real server on both backends, a
reviewer deciding over HTTP, and the signed callback resuming the thread through a real receiver."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from escalated.agent.client import EscalatedClient
from escalated.agent.receiver import make_receiver_app, start_receiver

# LangGraph, the adapter and the example graph are imported where they are used: under --dist
# loadfile every worker imports every test module at collection, and only one runs this file.

SECRET = "whsec_langgraph_adapter"


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "refunds.log"
    monkeypatch.setenv("REFUND_LEDGER", str(path))
    return path


def refunds(ledger: Path) -> list[str]:
    return ledger.read_text().splitlines() if ledger.exists() else []


class Threads:
    """The graph behind a real callback receiver; ``finished[thread id]`` resolves with each thread's output."""

    def __init__(self, client, policy: str) -> None:
        from escalated.adapters.langgraph import ThreadResumer

        self.client, self.policy = client, policy
        self.finished: dict[str, asyncio.Future] = {}
        self.resumer = ThreadResumer(None, client, on_finished=self._finished)

    def _finished(self, thread_id: str, output: dict) -> None:
        self.finished.setdefault(thread_id, asyncio.get_running_loop().create_future()).set_result(output)

    async def __aenter__(self) -> Threads:
        from examples.langgraph_refund_tools.graph import build_graph

        self._receiver = await start_receiver(make_receiver_app(self.resumer, secret=SECRET))
        self.resumer.graph = build_graph(self.client, policy=self.policy, resume_url=self._receiver.url + "/resume", resume_secret=SECRET)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._receiver.close()

    async def start(self, thread_id: str, order: str, amount: float) -> str:
        from examples.langgraph_refund_tools.graph import request_for, thread

        self.finished.setdefault(thread_id, asyncio.get_running_loop().create_future())
        state = await self.resumer.graph.ainvoke(request_for(order, amount), thread(thread_id))
        return state["__interrupt__"][0].value["escalationId"]

    async def answer(self, thread_id: str) -> str:
        output = await asyncio.wait_for(self.finished[thread_id], timeout=30)
        return output["messages"][-1].content


async def test_an_approved_call_runs_the_tool_after_the_callback_resumes_the_thread(client, reviewer, run_id, ledger):
    async with Threads(client, "tools.refund") as threads:
        escalation_id = await threads.start(run_id, "o-1", 1200)
        [asked] = await reviewer.open_for(run_id)
        assert asked["id"] == escalation_id and refunds(ledger) == []
        assert asked["subject"] == {"type": "tool_call", "id": "call-refund-o-1", "label": "issue_refund"}
        assert asked["evidence"] == ["Tool: issue_refund", 'Arguments (JSON): {"order_id": "o-1", "amount_eur": 1200.0}']
        await reviewer.decide(escalation_id, "approve")
        assert await threads.answer(run_id) == "Refund step finished: refunded 1200.00 EUR for order o-1"
    assert refunds(ledger) == ["o-1 1200.00"]
    # The tools node ran twice (pause, then resume) and filed one escalation.
    assert len(await reviewer.all_for(run_id)) == 1


async def test_parallel_threads_are_each_resumed_with_their_own_decision(client, reviewer, run_id, ledger):
    first, second = f"{run_id}-a", f"{run_id}-b"
    async with Threads(client, "tools.refund") as threads:
        ids = {first: await threads.start(first, "o-2", 20), second: await threads.start(second, "o-3", 30)}
        await asyncio.gather(
            reviewer.decide(ids[first], "reject", reason="duplicate request"), reviewer.decide(ids[second], "approve")
        )
        answers = {t: await threads.answer(t) for t in (first, second)}
    assert answers == {
        first: "Refund step finished: The call was rejected by alice. Reason: duplicate request",
        second: "Refund step finished: refunded 30.00 EUR for order o-3",
    }
    assert refunds(ledger) == ["o-3 30.00"]


async def test_a_timeout_applies_the_policy_default(client, run_id, ledger):
    async with Threads(client, "tools.late-no") as threads:  # 1 s SLA, default reject
        await threads.start(run_id, "o-4", 40)
        answer = await threads.answer(run_id)
    assert answer == "Refund step finished: No reviewer decided in time; the policy's default is to reject the call."
    assert refunds(ledger) == []


async def test_a_repeated_resume_runs_nothing_again(client, reviewer, run_id, ledger):
    from escalated.adapters.langgraph import resume_by_waiting

    async with Threads(client, "tools.refund") as threads:
        escalation_id = await threads.start(run_id, "o-5", 50)
        await reviewer.decide(escalation_id, "approve")
        await threads.answer(run_id)
        # The /wait fallback arriving after the callback: the thread waits on nothing any more.
        assert await resume_by_waiting(threads.resumer, escalation_id) is None
    assert refunds(ledger) == ["o-5 50.00"]


@pytest.mark.parametrize("cause", ["unknown policy", "server down", "read-only key"])
async def test_bad_input_is_one_clear_exception_and_the_tool_never_runs(adapter_server, run_id, ledger, unused_tcp_port, cause):
    from escalated.adapters.approvals import ApprovalUnavailable
    from examples.langgraph_refund_tools.graph import build_graph, request_for, thread

    policy, url, key = "tools.refund", adapter_server.url, adapter_server.bootstrap_key
    if cause == "unknown policy":
        policy, expected = "tools.nope", "unknown_policy"
    elif cause == "server down":
        url, expected = f"http://127.0.0.1:{unused_tcp_port}", "cannot be reached"
    else:
        key, expected = adapter_server.cli("keys", "create", "--scope", "escalations:read"), "escalations:write"
    async with EscalatedClient(url, key, retry_backoff_s=0.01) as client:
        with pytest.raises(ApprovalUnavailable, match=expected):
            await build_graph(client, policy=policy).ainvoke(request_for("o-9", 5), thread(run_id))
    assert refunds(ledger) == []
