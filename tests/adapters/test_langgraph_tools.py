"""The LangGraph adapter's tool gate: ``@interrupt_for_approval`` tools of a real prebuilt agent on a
checkpointer, driven by ``ainvoke_with_approvals`` against a real server on both backends, a reviewer
deciding over HTTP. Each tool call of a message pauses on its own interrupt and is filed as its own
escalation; only the approved one runs, once."""

from __future__ import annotations

import asyncio
import warnings

# LangGraph and the adapter are imported where they are used: under --dist loadfile every worker
# imports every test module at collection, and only one of them runs this file.


def shop(ran: list[str]):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent

    from escalated.adapters.langgraph import interrupt_for_approval
    from tests.adapters.refund_tools import refund_tools, scripted

    with warnings.catch_warnings():  # moved to langchain.agents in LangGraph 1.0; the prebuilt one is what apps use
        warnings.simplefilter("ignore")
        return create_react_agent(scripted(), refund_tools(ran, gate=interrupt_for_approval), checkpointer=InMemorySaver(), name="shop")


async def test_each_call_waits_on_its_own_escalation_and_only_the_approved_one_runs_once(client, reviewer, run_id):
    from escalated.adapters.langgraph import ainvoke_with_approvals
    from tests.adapters.refund_tools import reject_o2_and_approve_o1

    ran: list[str] = []
    graph = shop(ran)
    config = {"configurable": {"thread_id": run_id}}
    running = asyncio.ensure_future(
        ainvoke_with_approvals(graph, {"messages": [("user", "refund both")]}, config, policy="tools.refund", client=client)
    )
    asked = await reviewer.open_for(run_id, count=2)
    assert ran == ["look up o-1"]  # the ungated tool ran; no refund before a decision
    await reject_o2_and_approve_o1(reviewer, run_id, asked)
    output = await asyncio.wait_for(running, timeout=30)
    assert ran == ["look up o-1", "refund o-1"]  # each once: the resume re-ran only the interrupted calls
    assert output["messages"][-1].content == (
        "refunded o-1 | The call was rejected by alice. Reason: already refunded | found o-1"
    )
    assert len(await reviewer.all_for(run_id)) == 2
