"""The support agent of test_openai_agents.py's "what the reviewer sees": an OpenAI Agents SDK tool
with ``needs_approval`` whose run context is large and private, and its scripted model. A module of
its own so that the Agents SDK is imported by the worker that runs those tests, not by every worker
at collection."""

from __future__ import annotations

from dataclasses import dataclass

from agents import RunContextWrapper, function_tool
from agents.testing import ModelCall, assistant_message, function_call


@dataclass
class Booking:
    """A run context as real apps have them: large, and private."""

    history: str
    card_token: str


@function_tool(needs_approval=True)
async def cancel_flight(ctx: RunContextWrapper[Booking], flight: str, note: str, api_key: str) -> str:
    """Cancel a booked flight and refund the fare."""
    return f"cancelled {flight}"


def cancel_model(call: ModelCall) -> list:
    if any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in call.input):
        return [assistant_message("done")]
    arguments = {"flight": "LH 123", "note": "n" * 20_000, "api_key": "sk-live-do-not-show"}
    return [function_call("cancel_flight", arguments, call_id="call-cancel")]
