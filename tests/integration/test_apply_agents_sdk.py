"""scan -> init --accept-all -> apply on a real OpenAI Agents SDK app, then a real run with the
SDK's ScriptedModel against a real serve: apply gates the money tool through the SDK's own
needs_approval and the adapter's run_with_approvals, so the refund runs only after a reviewer
approves the tool call over HTTP, and never after a reject."""

from __future__ import annotations

import subprocess
from pathlib import Path


from tests.integration.test_guard_end_to_end import _decide, _wait_for_open_escalation
from tests.support.applied import applied_shop, apply_server_fixture, assert_applied_once_and_covered, finish, launch
from tests.support.server import ServerProcess


apply_server = apply_server_fixture("apply-agents-sdk")

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
    return project, launch(project, apply_server, OPENAI_AGENTS_DISABLE_TRACING="1")


def test_the_refund_runs_only_after_the_reviewer_approves_the_tool_call(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    try:
        asked = _wait_for_open_escalation(apply_server)
        assert asked["subject"]["type"] == "tool_call" and asked["subject"]["label"] == "issue_refund"
        assert asked["evidence"][:2] == ["Tool: issue_refund", 'Arguments (JSON): {"order_id": "o-981", "amount_eur": 12.5}']
        assert "private notes" not in str(asked)  # the run's context is not the evidence
        assert run.poll() is None and not (project / "refunds.log").exists()  # nothing refunded yet
        _decide(apply_server, asked["id"], "approve")
        final = _wait_for_open_escalation(apply_server)  # the guard around the run: its final answer
        assert (project / "refunds.log").read_text() == "o-981 1250\n"
        _decide(apply_server, final["id"], "approve")
        out, err = finish(run)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert out.strip() == "done: refunded 12.50 EUR for order o-981"


def test_a_rejected_tool_call_never_refunds(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    try:
        asked = _wait_for_open_escalation(apply_server)
        _decide(apply_server, asked["id"], "reject")
        final = _wait_for_open_escalation(apply_server)
        assert final["id"] != asked["id"]
        _decide(apply_server, final["id"], "approve")
        out, err = finish(run)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert "rejected" in out
    assert not (project / "refunds.log").exists()
