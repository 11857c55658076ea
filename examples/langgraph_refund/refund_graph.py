"""A LangGraph refund flow that pauses for a human through escalated.

The ``review`` node creates an escalation whose ``runId`` is the LangGraph
``thread_id`` and then calls ``interrupt()``. The graph's checkpointer keeps
the paused thread; escalated's signed callback arrives at the receiver,
which resumes that thread with ``Command(resume=<callback body>)``.

On resume LangGraph runs the ``review`` node again from its first line, so
``create_escalation`` runs twice per thread. The ``Idempotency-Key``
(thread id + node name) makes the second call replay the first answer: one
escalation per pause, however often the node re-runs.

Two outcomes resume the thread: a decision (or the SLA's default choice),
and a cancellation. A cancellation sends a callback only when the policy has
``cancel_callback = true``; ``resume_by_waiting`` is the ``/wait`` fallback
that sees it either way, so a paused thread never waits forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypedDict

import attrs
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from escalated.agent.client import EscalatedClient
from escalated.agent.outcome import Outcome

POLICY = "refunds.large"
AUTO_APPROVE_LIMIT_EUR = 100


class RefundState(TypedDict, total=False):
    order_id: str
    amount_eur: float
    escalation_id: str
    decision: dict
    outcome: str


def build_graph(
    client: EscalatedClient, *, resume_url: str | None, secret: str, agent_id: str = "refund-agent"
) -> Any:
    """The compiled graph; ``resume_url`` is where the receiver listens (None: resume by ``/wait`` only)."""

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
            resume={"mode": "webhook", "url": resume_url, "secret": secret} if resume_url else None,
            # Same thread, same node: same key, so the re-run on resume creates nothing new.
            idempotency_key=f"{thread_id}:review",
        )
        decision = interrupt({"escalationId": escalation["id"]})
        return {"escalation_id": escalation["id"], "decision": decision}

    def route(state: RefundState) -> str:
        return "review" if state["amount_eur"] > AUTO_APPROVE_LIMIT_EUR else "refund"

    def refund(state: RefundState) -> dict:
        decision = state.get("decision")
        if decision is not None and "cancelledBy" in decision:  # an escalation.cancelled body
            because = f": {decision['reason']}" if decision.get("reason") else ""
            return {"outcome": f"refund cancelled by {decision['cancelledBy']}{because}"}
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
    """Resume the thread named by an outcome's runId, once.

    The receiver calls it with a ``Callback`` or a ``Cancelled``;
    ``resume_by_waiting`` calls it with the same from ``/wait``. Whichever
    comes first resumes; the other finds the thread no longer waiting.
    ``graph`` is set once built: the graph needs the receiver's URL, and the
    receiver needs this handler before it can listen.
    """

    graph: Any = None
    on_finished: Callable[[str, dict], None] | None = None
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)

    async def __call__(self, outcome: Outcome) -> None:
        config = thread_config(outcome.run_id)
        async with self._lock:  # the callback and the /wait fallback may arrive together
            if not _waits_for(await self.graph.aget_state(config), outcome.escalation_id):
                # Already resumed (a repeat, or the other path was first) or not ours: nothing to do.
                return
            # The callback's JSON body (verified byte for byte by the receiver), or the same fields from /wait.
            final = await self.graph.ainvoke(Command(resume=outcome.body), config)
        if self.on_finished is not None:
            self.on_finished(outcome.run_id, final)


async def resume_by_waiting(client: EscalatedClient, resumer: Resumer, escalation_id: str) -> None:
    """The ``/wait`` fallback: resume the thread when the escalation ends, callback or not."""
    outcome = await client.wait_for_outcome(escalation_id)
    if outcome is not None:
        await resumer(outcome)


def _waits_for(snapshot: Any, escalation_id: str) -> bool:
    pending = [i.value for task in snapshot.tasks for i in task.interrupts]
    return any(isinstance(v, dict) and v.get("escalationId") == escalation_id for v in pending)
