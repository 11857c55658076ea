"""scan -> init --accept-all -> apply on a real OpenAI Agents SDK app, then a real run with the
SDK's ScriptedModel against a real serve: apply gates the money tool through the SDK's own
needs_approval and the adapter's run_with_approvals, so the refund runs only after a reviewer
approves the tool call over HTTP, and never after a reject."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.applied import (
    applied_shop,
    apply_server_fixture,
    assert_applied_once_and_covered,
    assert_asked_about_the_refund,
    assert_never_refunded,
    assert_refunded_once,
    launch,
    run_and_decide,
)
from tests.support.server import ServerProcess

apply_server = apply_server_fixture("apply-agents-sdk")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = ("agents", "agents.testing")

SHOP = '''\
import asyncio
from dataclasses import dataclass

import stripe
from agents import Agent, RunContextWrapper, Runner, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call


@dataclass
class Shop:
    crm_notes: str = "private notes the reviewer never needs"


@function_tool
def issue_refund(ctx: RunContextWrapper[Shop], order_id: str, amount_eur: float) -> str:
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


def step(call):
    answers = [i for i in call.input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if answers:
        return [assistant_message(f"done: {answers[-1]['output']}")]
    return [function_call("issue_refund", {"order_id": "o-981", "amount_eur": 12.5}, call_id="call-981")]


agent = Agent[Shop](
    name="refund-agent", tools=[issue_refund], model=ScriptedModel([ModelStep.respond(step) for _ in range(4)])
)


async def handle(request):
    result = await Runner.run(agent, request, context=Shop())
    return result.final_output


if __name__ == "__main__":
    print(asyncio.run(handle("refund order o-981")))
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert "@function_tool(needs_approval=True)\ndef issue_refund(" in source
    assert 'run_with_approvals(agent, request, context=Shop(), policy="agents.shop.handle", run_id=' in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project, launch(project, apply_server, preload=FRAMEWORK, OPENAI_AGENTS_DISABLE_TRACING="1")


def test_the_refund_runs_only_after_the_reviewer_approves_the_tool_call(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "approve")
    assert_asked_about_the_refund(decided.asked)
    assert_refunded_once(project, decided)


def test_a_rejected_tool_call_never_refunds(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "reject")
    assert "rejected" in decided.out
    assert_never_refunded(project, decided)
