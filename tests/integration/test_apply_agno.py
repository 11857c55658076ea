"""scan -> init --accept-all -> apply on a real Agno agent, then a real ``agent.run`` with a scripted
Agno model (a ``Model`` subclass, Agno's own extension point for a model provider, answering the refund
call and then a final answer) against a real serve. apply gates the money tool through Agno's own
confirmation (``@tool(requires_confirmation=True)``) and runs the agent through the adapter's
``run_with_approvals`` (escalated.adapters.agno), which files each paused call and confirms or rejects
it with the reviewer's decision. The refund runs only after a reviewer approves the tool call over HTTP,
once, and never after a reject; the model reads who rejected it and why."""

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

# Agno reports telemetry to its own servers unless told not to: nothing leaves the machine.
QUIET = {"AGNO_TELEMETRY": "false"}

apply_server = apply_server_fixture("apply-agno")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = ("agno.agent", "agno.models.base", "agno.models.response", "agno.tools")

SHOP = '''\
import json
from dataclasses import dataclass

import stripe
from agno.agent import Agent
from agno.models.base import Model
from agno.models.response import ModelResponse
from agno.tools import tool


@tool
def issue_refund(order_id: str, amount_eur: float) -> str:
    """Refund an order to the customer's card."""
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


@dataclass
class Scripted(Model):
    """The refund first, then an answer quoting what the tool returned."""

    id: str = "scripted"
    name: str = "Scripted"
    provider: str = "scripted"

    def invoke(self, messages, assistant_message=None, **kwargs):
        answers = [m for m in messages if m.role == "tool"]
        if answers:
            return ModelResponse(role="assistant", content=f"done: {answers[-1].content}")
        asked = json.dumps({"order_id": "o-981", "amount_eur": 12.5})
        call = {"id": "call-981", "type": "function", "function": {"name": "issue_refund", "arguments": asked}}
        return ModelResponse(role="assistant", tool_calls=[call])

    async def ainvoke(self, *args, **kwargs):
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args, **kwargs):
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args, **kwargs):
        yield self.invoke(*args, **kwargs)

    def _parse_provider_response(self, response, **kwargs):
        return response

    def _parse_provider_response_delta(self, response):
        return response


agent = Agent(model=Scripted(), tools=[issue_refund], name="refund-agent")


def handle(request):
    return agent.run(request).content


if __name__ == "__main__":
    print(handle("refund order o-981"))
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert "@tool(requires_confirmation=True)\ndef issue_refund(" in source and "guard_tool" not in source
    assert (
        'guard("shop.handle", lambda: run_with_approvals(agent, request, policy="agents.shop.handle", '
        'run_id=f"shop.handle:{uuid.uuid4()}")).content'
    ) in source
    assert "from escalated.adapters.agno import run_with_approvals\n" in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project, launch(project, apply_server, preload=FRAMEWORK, **QUIET)


def test_the_refund_waits_in_agnos_confirmation_until_approved_and_runs_once(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "approve")  # the run paused at the tool until then
    assert_asked_about_the_refund(decided.asked)
    assert decided.asked["agentId"] == "refund-agent"
    assert_refunded_once(project, decided)


def test_a_rejected_tool_call_never_refunds_and_the_model_hears_why(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "reject")  # the run went on: the model answered the rejection
    assert decided.out.strip().startswith("done: The call was rejected by") and "looks right" in decided.out, decided.out
    assert_never_refunded(project, decided)
