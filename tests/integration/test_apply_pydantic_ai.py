"""scan -> init --accept-all -> apply on a real Pydantic AI app, then a real run with Pydantic AI's
FunctionModel scripting the tool call against a real serve: apply gates the money tool through
Pydantic AI's own requires_approval (the agent's output_type admitting DeferredToolRequests) and the
adapter's run_with_approvals, so the refund runs only after a reviewer approves the tool call over
HTTP, and never after a reject."""

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

apply_server = apply_server_fixture("apply-pydantic-ai")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = ("pydantic_ai", "pydantic_ai.messages", "pydantic_ai.models.function")

SHOP = '''\
import asyncio
from dataclasses import dataclass

import stripe
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel


@dataclass
class Shop:
    crm_notes: str = "private notes the reviewer never needs"


def script(messages, info):
    answers = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if answers:
        return ModelResponse(parts=[TextPart(f"done: {answers[-1].content}")])
    return ModelResponse(parts=[ToolCallPart("issue_refund", {"order_id": "o-981", "amount_eur": 12.5}, tool_call_id="call-981")])


agent = Agent(FunctionModel(script), deps_type=Shop, name="refund-agent")


@agent.tool
def issue_refund(ctx: RunContext[Shop], order_id: str, amount_eur: float) -> str:
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


async def handle(request):
    result = await agent.run(request, deps=Shop())
    return result.output


if __name__ == "__main__":
    print(asyncio.run(handle("refund order o-981")))
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert "@agent.tool(requires_approval=True)\ndef issue_refund(" in source
    assert 'name="refund-agent", output_type=[str, DeferredToolRequests])' in source
    assert 'run_with_approvals(agent, request, deps=Shop(), policy="agents.shop.handle", run_id=' in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project, launch(project, apply_server, preload=FRAMEWORK)


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
