"""LangChain's own approval hook answered by the LangGraph adapter: a real ``create_agent`` with
``HumanInTheLoopMiddleware`` on a checkpointer, driven by ``ainvoke_with_approvals`` against a real
server on both backends, a reviewer deciding over HTTP. The middleware pauses before any gated call
runs (one interrupt for the model's turn, or one per call); each gated call is its own escalation,
only the approved one runs, once, and the model reads who rejected the other and why."""

from __future__ import annotations

import asyncio

import pytest

# LangChain, LangGraph and the adapter are imported where they are used: under --dist loadfile
# every worker imports every test module at collection, and only one of them runs this file.


def shop(ran: list[str], mode: str):
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.adapters.refund_tools import refund_tools, scripted

    gate = HumanInTheLoopMiddleware(interrupt_on={"issue_refund": {"allowed_decisions": ["approve", "reject"]}}, interrupt_mode=mode)
    return create_agent(scripted(), refund_tools(ran), middleware=[gate], checkpointer=InMemorySaver(), name="shop")


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_each_gated_call_is_its_own_escalation_and_only_the_approved_one_runs_once(client, reviewer, run_id, mode):
    from escalated.adapters.langgraph import ainvoke_with_approvals
    from tests.adapters.refund_tools import reject_o2_and_approve_o1

    ran: list[str] = []
    config = {"configurable": {"thread_id": run_id}}
    running = asyncio.ensure_future(
        ainvoke_with_approvals(shop(ran, mode), {"messages": [("user", "refund both")]}, config, policy="tools.refund", client=client)
    )
    asked = await reviewer.open_for(run_id, count=2)
    assert not any(r.startswith("refund") for r in ran)  # no refund before a decision
    await reject_o2_and_approve_o1(reviewer, run_id, asked)
    output = await asyncio.wait_for(running, timeout=30)
    assert sorted(ran) == ["look up o-1", "refund o-1"]  # each once
    answers = output["messages"][-1].content.split(" | ")  # batched: the rejection comes first
    rejected = [a for a in answers if "rejected" in a]
    assert sorted(set(answers) - set(rejected)) == ["found o-1", "refunded o-1"] and len(rejected) == 1
    assert "The call was rejected by alice. Reason: already refunded" in rejected[0]
    assert len(await reviewer.all_for(run_id)) == 2
