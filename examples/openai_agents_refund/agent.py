"""A refund agent on the OpenAI Agents SDK whose refund tool needs a reviewer's approval.

The model is the SDK's own ``ScriptedModel`` (no network, no API key): it
reads the order and amount from the request, asks for ``issue_refund``,
and, once the tool answered (or a reviewer's rejection came back instead),
says what happened. Swap in a real model and nothing else changes.

``issue_refund`` appends one line to the ledger file (``REFUND_LEDGER``,
default ``refunds.log``): the proof of how often a refund really ran.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, RunContextWrapper, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

REQUEST = re.compile(r"order (?P<order>\S+?):? (?P<amount>[\d.]+) EUR")


@dataclass
class Shop:
    """The run's context: what the tools may use, never shown to the model or the reviewer."""

    ledger: str = field(default_factory=lambda: os.environ.get("REFUND_LEDGER", "refunds.log"))
    crm_notes: str = ""


@function_tool(needs_approval=True)
async def issue_refund(ctx: RunContextWrapper[Shop], order_id: str, amount_eur: float) -> str:
    """Refund an order to the customer's card."""
    with open(ctx.context.ledger, "a", encoding="utf-8") as ledger:
        ledger.write(f"{order_id} {amount_eur:.2f}\n")
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


def refund_model(call: ModelCall) -> list[Any]:
    """One step of the scripted model: ask for the refund, then report how it went."""
    items = call.input if isinstance(call.input, list) else [{"role": "user", "content": call.input}]
    answers = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if answers:
        return [assistant_message(f"Refund step finished: {answers[-1]['output']}")]
    asked = REQUEST.search(str(items[0].get("content", "")))
    if asked is None:
        return [assistant_message("I could not find an order and an amount in the request.")]
    order, amount = asked["order"], float(asked["amount"])
    return [function_call("issue_refund", {"order_id": order, "amount_eur": amount}, call_id=f"call-refund-{order}")]


def build_agent() -> Agent[Shop]:
    # One step per model call; a resumed run starts a new process with a new
    # model, so every step answers from what the call holds, not from a script position.
    model = ScriptedModel([ModelStep.respond(refund_model) for _ in range(8)])
    return Agent(name="refund-agent", instructions="Refund orders when asked.", model=model, tools=[issue_refund])


def request_for(order_id: str, amount_eur: float) -> str:
    return f"Please refund order {order_id}: {amount_eur:.2f} EUR"
