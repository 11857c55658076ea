"""The support agent of test_guard_tool_calls.py: an OpenAI Agents SDK tool that takes the run
context, under ``guard_tool``, and its scripted model. A module of its own so that the Agents SDK
is imported by the worker that runs those tests, not by every worker at collection."""

from __future__ import annotations

from dataclasses import dataclass

from agents import function_tool
from agents.testing import ModelCall, assistant_message, function_call
from agents.tool_context import ToolContext

from escalated.guard import guard_tool


@dataclass
class Booking:
    history: str
    card_token: str


cancelled: list[str] = []


@function_tool
@guard_tool("support.cancel", awaitable=True)
async def cancel_flight(ctx: ToolContext[Booking], flight: str, reason: str) -> str:
    """Cancel a booked flight."""
    cancelled.append(flight)
    return f"cancelled {flight}"


def support_model(call: ModelCall) -> list:
    if any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in call.input):
        return [assistant_message("Your flight is cancelled.")]
    return [function_call("cancel_flight", {"flight": "LH 123", "reason": "customer asked"}, call_id="call-1")]
