"""LangChain's own approval hook answered by the LangGraph adapter: a real ``create_agent`` with
``HumanInTheLoopMiddleware`` on a checkpointer, driven by ``ainvoke_with_approvals`` against a real
server on both backends, a reviewer deciding over HTTP. The middleware pauses before any gated call
runs (one interrupt for the model's turn, or one per call); each gated call is its own escalation,
only the approved one runs, once, and the model reads who rejected the other and why."""

from __future__ import annotations

import asyncio

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from escalated.adapters.langgraph import ainvoke_with_approvals

CALLS = [
    {"name": "issue_refund", "args": {"order_id": "o-1", "amount_eur": 10.0}, "id": "call-1"},
    {"name": "issue_refund", "args": {"order_id": "o-2", "amount_eur": 20.0}, "id": "call-2"},
    {"name": "look_up", "args": {"order_id": "o-1"}, "id": "call-3"},
]


class Scripted(GenericFakeChatModel):
    """Three tool calls in one message, then an answer listing what each returned."""

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        answers = [m.content for m in messages if isinstance(m, ToolMessage)]
        self.messages = iter([AIMessage(content=" | ".join(answers))] if answers else [AIMessage(content="", tool_calls=CALLS)])
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def shop(ran: list[str], mode: str):
    @tool
    async def issue_refund(order_id: str, amount_eur: float) -> str:
        """Refund an order."""
        ran.append(f"refund {order_id}")
        return f"refunded {order_id}"

    @tool
    def look_up(order_id: str) -> str:
        """Look an order up."""
        ran.append(f"look up {order_id}")
        return f"found {order_id}"

    gate = HumanInTheLoopMiddleware(interrupt_on={"issue_refund": {"allowed_decisions": ["approve", "reject"]}}, interrupt_mode=mode)
    return create_agent(Scripted(messages=iter([])), [issue_refund, look_up], middleware=[gate], checkpointer=InMemorySaver(), name="shop")


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_each_gated_call_is_its_own_escalation_and_only_the_approved_one_runs_once(client, reviewer, run_id, mode):
    ran: list[str] = []
    config = {"configurable": {"thread_id": run_id}}
    running = asyncio.ensure_future(
        ainvoke_with_approvals(shop(ran, mode), {"messages": [("user", "refund both")]}, config, policy="tools.refund", client=client)
    )
    first, second = await reviewer.open_for(run_id, count=2)
    assert not any(r.startswith("refund") for r in ran)  # no refund before a decision
    by_order = {e["evidence"][1]: e for e in (first, second)}
    approve = by_order['Arguments (JSON): {"order_id": "o-1", "amount_eur": 10.0}']
    reject = by_order['Arguments (JSON): {"order_id": "o-2", "amount_eur": 20.0}']
    assert approve["subject"]["label"] == "issue_refund" and approve["agentId"] == "shop" and approve["runId"] == run_id
    await reviewer.decide(reject["id"], "reject", reason="already refunded")
    await reviewer.decide(approve["id"], "approve")
    output = await asyncio.wait_for(running, timeout=30)
    assert sorted(ran) == ["look up o-1", "refund o-1"]  # each once
    answers = output["messages"][-1].content.split(" | ")  # batched: the rejection comes first
    rejected = [a for a in answers if "rejected" in a]
    assert sorted(set(answers) - set(rejected)) == ["found o-1", "refunded o-1"] and len(rejected) == 1
    assert "The call was rejected by alice. Reason: already refunded" in rejected[0]
    assert len(await reviewer.all_for(run_id)) == 2
