"""A LangGraph refund flow that pauses for a human through escalated.

The ``review`` node creates an escalation whose ``runId`` is the LangGraph
``thread_id`` and then calls ``interrupt()``. The graph's checkpointer keeps
the paused thread; escalated's signed callback arrives at the receiver,
which resumes that thread with ``Command(resume=<callback body>)``.

On resume LangGraph runs the ``review`` node again from its first line, so
``create_escalation`` runs twice per thread. The ``Idempotency-Key``
(thread id + node name) makes the second call replay the first answer: one
escalation per pause, however often the node re-runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypedDict

import attrs
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from escalated.client import EscalatedClient
from escalated.receiver import Callback

POLICY = "refunds.large"
AUTO_APPROVE_LIMIT_EUR = 100


class RefundState(TypedDict, total=False):
    order_id: str
    amount_eur: float
    escalation_id: str
    decision: dict
    outcome: str


def build_graph(client: EscalatedClient, *, resume_url: str, secret: str, agent_id: str = "refund-agent") -> Any:
    """The compiled graph; ``resume_url`` is where the receiver listens."""

    async def review(state: RefundState, config: RunnableConfig) -> dict:
        thread_id = config["configurable"]["thread_id"]
        escalation = await client.create_escalation(
            policy=POLICY,
            agent_id=agent_id,
            run_id=thread_id,
            subject={"type": "order", "id": state["order_id"], "label": f"Order {state['order_id']}"},
            question=f"Refund {state['amount_eur']:.2f} EUR for order {state['order_id']}?",
            evidence=[f"amount {state['amount_eur']:.2f} EUR is above the {AUTO_APPROVE_LIMIT_EUR} EUR auto limit"],
            choices=[{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
            resume={"mode": "webhook", "url": resume_url, "secret": secret},
            # Same thread, same node: same key, so the re-run on resume creates nothing new.
            idempotency_key=f"{thread_id}:review",
        )
        decision = interrupt({"escalationId": escalation["id"]})
        return {"escalation_id": escalation["id"], "decision": decision}

    def route(state: RefundState) -> str:
        return "review" if state["amount_eur"] > AUTO_APPROVE_LIMIT_EUR else "refund"

    def refund(state: RefundState) -> dict:
        decision = state.get("decision")
        if decision is not None and decision["choice"] != "approve":
            return {"outcome": f"refund denied by {decision['answeredBy']}"}
        return {"outcome": f"refunded {state['amount_eur']:.2f} EUR"}

    builder = StateGraph(RefundState)
    builder.add_node("review", review)
    builder.add_node("refund", refund)
    builder.add_conditional_edges(START, route, ["review", "refund"])
    builder.add_edge("review", "refund")
    builder.add_edge("refund", END)
    return builder.compile(checkpointer=InMemorySaver())


def thread_config(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id}}


@attrs.define
class Resumer:
    """The receiver's handler: resume the thread named by the callback's runId.

    ``graph`` is set once built: the graph needs the receiver's URL, and the
    receiver needs this handler before it can listen.
    """

    graph: Any = None
    on_finished: Callable[[str, dict], None] | None = None

    async def __call__(self, callback: Callback) -> None:
        config = thread_config(callback.run_id)
        if not _waits_for(await self.graph.aget_state(config), callback.escalation_id):
            # Already resumed (a repeat after a receiver restart) or not ours: nothing to do.
            return
        # The callback's own JSON body, verified byte for byte by the receiver.
        final = await self.graph.ainvoke(Command(resume=json.loads(callback.raw)), config)
        if self.on_finished is not None:
            self.on_finished(callback.run_id, final)


def _waits_for(snapshot: Any, escalation_id: str) -> bool:
    pending = [i.value for task in snapshot.tasks for i in task.interrupts]
    return any(isinstance(v, dict) and v.get("escalationId") == escalation_id for v in pending)
