"""``guard_tool`` on a real OpenAI Agents SDK tool that takes the run context.

The case of issue #22: a support agent's ``cancel_flight(ctx: ToolContext, ...)``
under a ``required`` contract was described as the ``repr`` of the whole
context (46,776 characters), refused by the server with 422, and no reviewer
ever saw it. Now it reaches the reviewer as the same short call every
adapter files.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import escalated.guard
from escalated.domain.limits import FILED_TEXT_BUDGET_CHARS
from escalated.guard.contracts import Choice, Contract, ContractSet, save_contracts

CONTRACT = Contract(
    id="support.cancel",
    path="support.py",
    function="handle",
    index=0,
    provider="openai-agents",
    api="Runner.run",
    mode="required",
    policy="tools.refund",
    question="May the support agent cancel this flight?",
    choices=(Choice("approve", "Approve"), Choice("reject", "Reject")),
    approve_choices=("approve",),
)


@pytest.fixture
def guarded(adapter_server, run_id, tmp_path, monkeypatch):
    save_contracts(tmp_path, ContractSet({CONTRACT.id: CONTRACT}))
    monkeypatch.setenv("ESCALATED_CONTRACTS", str(tmp_path / "escalated.contracts.toml"))
    monkeypatch.setenv("ESCALATED_URL", adapter_server.url)
    monkeypatch.setenv("ESCALATED_API_KEY", adapter_server.bootstrap_key)
    monkeypatch.setenv("ESCALATED_RUN_ID", run_id)
    from tests.adapters.support_agent import cancelled  # the Agents SDK: only where this file runs

    cancelled.clear()
    yield
    escalated.guard.shutdown()


async def test_a_guarded_tool_whose_context_holds_50_kb_reaches_the_reviewer_as_a_short_readable_call(guarded, reviewer, run_id):
    from agents import Agent, Runner
    from agents.testing import ModelStep, ScriptedModel

    from tests.adapters.support_agent import Booking, cancel_flight, cancelled, support_model

    agent = Agent(name="support", model=ScriptedModel([ModelStep.respond(support_model)] * 2), tools=[cancel_flight])
    context = Booking(history="h" * 50_000, card_token="tok_secret_card")
    run = asyncio.ensure_future(Runner.run(agent, "Please cancel LH 123", context=context))

    [asked] = await reviewer.open_for(run_id)
    assert cancelled == []
    assert asked["subject"] == {"type": "tool_call", "id": "support.cancel:0", "label": "cancel_flight"}
    assert asked["evidence"][:3] == [
        "Tool: cancel_flight",
        'Arguments (JSON): {"flight": "LH 123", "reason": "customer asked"}',
        "What it does: Cancel a booked flight.",
    ]
    shown = json.dumps([asked["question"], *asked["evidence"]])
    assert len(shown) < FILED_TEXT_BUDGET_CHARS and "hhhh" not in shown and "tok_secret_card" not in shown
    assert "ToolContext" not in shown and "Booking" not in shown

    await reviewer.decide(asked["id"], "approve")
    result = await asyncio.wait_for(run, timeout=30)
    assert cancelled == ["LH 123"] and result.final_output == "Your flight is cancelled."
