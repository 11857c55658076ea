"""A LangGraph refund agent whose refund tool call waits for a reviewer (escalated.adapters.langgraph).

``agent`` (a scripted model: no network, no API key) asks for
``issue_refund``; ``tools`` asks a reviewer about every tool call first
(``approve_tool_call``: one escalation each, then ``interrupt``), and only
once all are decided runs the approved ones and answers the others with the
reviewer's words. Asking about every call before running any matters:
LangGraph re-runs an interrupted node from its first line, so a tool run
between two pauses would run again.

``issue_refund`` appends one line to the ledger file (``REFUND_LEDGER``,
default ``refunds.log``).
"""

from __future__ import annotations

import operator
import os
import re
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from escalated.adapters.langgraph import approve_tool_call
from escalated.agent.client import EscalatedClient

REQUEST = re.compile(r"order (?P<order>\S+?):? (?P<amount>[\d.]+) EUR")


class State(TypedDict):
    messages: Annotated[list[AnyMessage], operator.add]


def issue_refund(order_id: str, amount_eur: float) -> str:
    """Refund an order to the customer's card."""
    with open(os.environ.get("REFUND_LEDGER", "refunds.log"), "a", encoding="utf-8") as ledger:
        ledger.write(f"{order_id} {amount_eur:.2f}\n")
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


TOOLS = {"issue_refund": issue_refund}


def agent(state: State) -> dict:
    """The scripted model: ask for the refund, then report how it went."""
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(f"Refund step finished: {last.content}")]}
    asked = REQUEST.search(str(last.content))
    if asked is None:
        return {"messages": [AIMessage("I could not find an order and an amount in the request.")]}
    call = {"name": "issue_refund", "args": {"order_id": asked["order"], "amount_eur": float(asked["amount"])}, "id": f"call-refund-{asked['order']}"}
    return {"messages": [AIMessage("", tool_calls=[call])]}


def build_graph(client: EscalatedClient, *, policy: str, resume_url: str | None = None, resume_secret: str | None = None) -> Any:
    """The compiled graph; ``resume_url`` is where a receiver listens (None: resume over /wait)."""

    async def tools(state: State, config: RunnableConfig) -> dict:
        calls = state["messages"][-1].tool_calls
        decided = [
            await approve_tool_call(config, call, policy=policy, client=client, agent_id="refund-agent",
                                    resume_url=resume_url, resume_secret=resume_secret)
            for call in calls
        ]
        answers = [
            ToolMessage(TOOLS[call["name"]](**call["args"]) if approval.approved else approval.message, tool_call_id=call["id"])
            for call, approval in zip(calls, decided, strict=True)
        ]
        return {"messages": answers}

    def next_step(state: State) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", next_step, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=InMemorySaver())


def request_for(order_id: str, amount_eur: float) -> dict:
    return {"messages": [HumanMessage(f"Please refund order {order_id}: {amount_eur:.2f} EUR")]}


def thread(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id}}
