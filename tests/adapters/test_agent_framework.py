"""The Microsoft Agent Framework adapter: the framework's real agent loop and function-invocation layer
with a scripted chat client (a ``BaseChatClient`` subclass, the framework's own extension point for a
model provider, as its own tests script one), a real server on both backends, a reviewer deciding over
HTTP. Two refunds in one model turn wait together; each is its own escalation with the tool's name,
arguments and description, only the approved one runs, once, and the model reads the rejection."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agent_framework import Agent, BaseChatClient, ChatMiddlewareLayer, ChatResponse, Content, FunctionInvocationLayer, Message, tool

from escalated.adapters.agent_framework import ApprovalUnavailable, run_with_approvals
from escalated.agent.client import EscalatedClient

REFUNDS = (("call-1", {"order_id": "o-1", "amount_eur": 10.0}), ("call-2", {"order_id": "o-2", "amount_eur": 20.0}))


class Scripted(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """Its ``calls`` in one turn (two refunds unless told), then an answer listing what each returned.
    Its layers are those of the framework's own clients (OpenAIChatClient's, in that order)."""

    def __init__(self, calls: tuple = REFUNDS, tool_name: str = "issue_refund") -> None:
        FunctionInvocationLayer.__init__(self)
        ChatMiddlewareLayer.__init__(self)
        BaseChatClient.__init__(self)
        self.calls, self.tool_name = calls, tool_name

    def _inner_get_response(self, *, messages, stream, options, **kwargs):
        async def respond() -> ChatResponse:
            results = [str(c.result) for m in messages for c in m.contents if c.type == "function_result"]
            if results:
                return ChatResponse(messages=Message("assistant", [" | ".join(results)]))
            asked = [Content.from_function_call(call_id=i, name=self.tool_name, arguments=json.dumps(a)) for i, a in self.calls]
            return ChatResponse(messages=Message("assistant", asked))

        return respond()


def shop(ran: list[str], client: Scripted | None = None) -> Agent:
    @tool(approval_mode="always_require")
    def issue_refund(order_id: str, amount_eur: float) -> str:
        """Refund an order to the customer's card."""
        ran.append(order_id)
        return f"refunded {order_id}"

    return Agent(client=client or Scripted(), tools=[issue_refund], name="shop")


async def test_each_waiting_call_is_its_own_escalation_and_only_the_approved_one_runs_once(client, reviewer, run_id):
    ran: list[str] = []
    running = asyncio.ensure_future(run_with_approvals(shop(ran), "refund both", policy="tools.refund", run_id=run_id, client=client))
    asked = await reviewer.open_for(run_id, count=2)
    assert ran == []  # neither refund runs before a decision
    by_order = {e["evidence"][1]: e for e in asked}
    approve = by_order['Arguments (JSON): {"order_id": "o-1", "amount_eur": 10.0}']
    reject = by_order['Arguments (JSON): {"order_id": "o-2", "amount_eur": 20.0}']
    assert approve["subject"] == {"type": "tool_call", "id": "call-1", "label": "issue_refund"}
    assert approve["evidence"][2] == "What it does: Refund an order to the customer's card."
    assert approve["agentId"] == "shop" and approve["runId"] == run_id
    await reviewer.decide(reject["id"], "reject", reason="already refunded")
    await reviewer.decide(approve["id"], "approve")
    response = await asyncio.wait_for(running, timeout=30)
    assert ran == ["o-1"]  # once
    assert response.text == "refunded o-1 | The call was rejected by alice. Reason: already refunded"
    assert len(await reviewer.all_for(run_id)) == 2


async def test_a_run_stopped_while_waiting_finds_its_decision_when_run_again(client, reviewer, run_id):
    # The wait is not durable across a restart, the escalation is: a run stopped before the decision, run
    # again under the same run id, files nothing new and runs the refund once, on the reviewer's one decision.
    ran: list[str] = []
    one = (REFUNDS[0],)
    first = asyncio.ensure_future(run_with_approvals(shop(ran, Scripted(one)), "refund", policy="tools.refund", run_id=run_id, client=client))
    [asked] = await reviewer.open_for(run_id)
    first.cancel()  # the process stopped while it waited
    with pytest.raises(asyncio.CancelledError):
        await first
    await reviewer.decide(asked["id"], "approve")
    again = await asyncio.wait_for(run_with_approvals(shop(ran, Scripted(one)), "refund", policy="tools.refund", run_id=run_id, client=client), 30)
    assert again.text == "refunded o-1"
    assert ran == ["o-1"]
    assert [e["id"] for e in await reviewer.all_for(run_id)] == [asked["id"]]


async def test_a_server_out_of_reach_runs_no_tool(run_id, unused_tcp_port):
    ran: list[str] = []
    async with EscalatedClient(f"http://127.0.0.1:{unused_tcp_port}", "ain_live_" + "x" * 32, retry_backoff_s=0.01) as down:
        with pytest.raises(ApprovalUnavailable, match="cannot be reached"):
            await run_with_approvals(shop(ran), "refund both", policy="tools.refund", run_id=run_id, client=down)
    assert ran == []


async def test_a_streamed_run_is_refused_before_anything_runs(client, run_id):
    ran: list[str] = []
    with pytest.raises(ApprovalUnavailable, match="stream"):
        await run_with_approvals(shop(ran), "refund both", policy="tools.refund", run_id=run_id, client=client, stream=True)
    assert ran == []
