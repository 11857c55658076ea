"""The LangGraph adapter's tool gate: ``@interrupt_for_approval`` tools of a real prebuilt agent on a
checkpointer, driven by ``ainvoke_with_approvals`` against a real server on both backends, a reviewer
deciding over HTTP. Each tool call of a message pauses on its own interrupt and is filed as its own
escalation; only the approved one runs, once."""

from __future__ import annotations

import asyncio
import warnings

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from escalated.adapters.langgraph import ainvoke_with_approvals, interrupt_for_approval

from langgraph.prebuilt import create_react_agent

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


def shop(ran: list[str]):
    @tool
    @interrupt_for_approval
    async def issue_refund(order_id: str, amount_eur: float) -> str:
        """Refund an order."""
        ran.append(f"refund {order_id}")
        return f"refunded {order_id}"

    @tool
    def look_up(order_id: str) -> str:
        """Look an order up."""
        ran.append(f"look up {order_id}")
        return f"found {order_id}"

    with warnings.catch_warnings():  # moved to langchain.agents in LangGraph 1.0; the prebuilt one is what apps use
        warnings.simplefilter("ignore")
        return create_react_agent(Scripted(messages=iter([])), [issue_refund, look_up], checkpointer=InMemorySaver(), name="shop")


async def test_each_call_waits_on_its_own_escalation_and_only_the_approved_one_runs_once(client, reviewer, run_id):
    ran: list[str] = []
    graph = shop(ran)
    config = {"configurable": {"thread_id": run_id}}
    running = asyncio.ensure_future(
        ainvoke_with_approvals(graph, {"messages": [("user", "refund both")]}, config, policy="tools.refund", client=client)
    )
    first, second = await reviewer.open_for(run_id, count=2)
    assert ran == ["look up o-1"]  # the ungated tool ran; no refund before a decision
    by_order = {e["evidence"][1]: e for e in (first, second)}
    approve = by_order['Arguments (JSON): {"order_id": "o-1", "amount_eur": 10.0}']
    reject = by_order['Arguments (JSON): {"order_id": "o-2", "amount_eur": 20.0}']
    assert approve["subject"]["label"] == "issue_refund" and approve["agentId"] == "shop" and approve["runId"] == run_id
    await reviewer.decide(reject["id"], "reject", reason="already refunded")
    await reviewer.decide(approve["id"], "approve")
    output = await asyncio.wait_for(running, timeout=30)
    assert ran == ["look up o-1", "refund o-1"]  # each once: the resume re-ran only the interrupted calls
    assert output["messages"][-1].content == (
        "refunded o-1 | The call was rejected by alice. Reason: already refunded | found o-1"
    )
    assert len(await reviewer.all_for(run_id)) == 2
