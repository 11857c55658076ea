"""A refund agent on Pydantic AI whose refund tool needs a reviewer's approval.

The model is Pydantic AI's own ``FunctionModel`` (no network, no API key): it
reads the order and amount from the request, asks for ``issue_refund``, and,
once the tool answered (or a reviewer's denial came back instead), says what
happened. Swap in a real model and nothing else changes. The agent's output
type includes ``DeferredToolRequests``: that is how Pydantic AI ends a run
that waits for approvals.

``issue_refund`` appends one line to the ledger file (``deps.ledger``,
default ``REFUND_LEDGER`` or ``refunds.log``): the proof of how often a
refund really ran.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

REQUEST = re.compile(r"order (?P<order>\S+?):? (?P<amount>[\d.]+) EUR")


@dataclass
class Shop:
    """The run's dependencies: what the tools may use, never shown to the model or the reviewer."""

    ledger: str = field(default_factory=lambda: os.environ.get("REFUND_LEDGER", "refunds.log"))
    crm_notes: str = ""


def refund_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The scripted model: ask for the refund, then report how it went."""
    answers = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if answers:
        return ModelResponse(parts=[TextPart(f"Refund step finished: {answers[-1].content}")])
    prompt = next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))
    asked = REQUEST.search(str(prompt))
    if asked is None:
        return ModelResponse(parts=[TextPart("I could not find an order and an amount in the request.")])
    arguments = {"order_id": asked["order"], "amount_eur": float(asked["amount"])}
    return ModelResponse(parts=[ToolCallPart("issue_refund", arguments, tool_call_id=f"call-refund-{asked['order']}")])


def build_agent() -> Agent[Shop, str | DeferredToolRequests]:
    agent = Agent(
        FunctionModel(refund_model),
        name="refund-agent",
        deps_type=Shop,
        output_type=[str, DeferredToolRequests],
        instructions="Refund orders when asked.",
    )

    @agent.tool(requires_approval=True)
    def issue_refund(ctx: RunContext[Shop], order_id: str, amount_eur: float) -> str:
        """Refund an order to the customer's card."""
        with open(ctx.deps.ledger, "a", encoding="utf-8") as ledger:
            ledger.write(f"{order_id} {amount_eur:.2f}\n")
        return f"refunded {amount_eur:.2f} EUR for order {order_id}"

    return agent


def request_for(order_id: str, amount_eur: float) -> str:
    return f"Please refund order {order_id}: {amount_eur:.2f} EUR"
