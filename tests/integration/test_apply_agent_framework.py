"""scan -> init --accept-all -> apply on a real Microsoft Agent Framework agent, then a real ``agent.run``
with a scripted chat client (a ``BaseChatClient`` subclass with the layers of the framework's own clients,
answering the refund call and then a final answer) against a real serve. apply gates the money tool
through the framework's own approval (``@tool(approval_mode="always_require")``) and runs the agent
through the adapter's ``run_with_approvals`` (escalated.adapters.agent_framework), which files each call
the run returns for approval and answers it with the reviewer's decision. The refund runs only after a
reviewer approves the tool call over HTTP, once, and never after a reject; the model reads who rejected
it and why."""

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

apply_server = apply_server_fixture("apply-agent-framework")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = ("agent_framework",)

SHOP = '''\
import asyncio
import json
from typing import Any

import stripe
from agent_framework import Agent, BaseChatClient, ChatMiddlewareLayer, ChatResponse, Content, FunctionInvocationLayer, Message, tool


@tool
def issue_refund(order_id: str, amount_eur: float) -> str:
    """Refund an order to the customer's card."""
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


class Scripted(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """The refund first, then an answer quoting what the tool returned."""

    def _inner_get_response(self, *, messages, stream, options, **kwargs):
        async def respond():
            results = [c.result for m in messages for c in m.contents if c.type == "function_result"]
            if results:
                return ChatResponse(messages=Message("assistant", [f"done: {results[-1]}"]))
            asked = json.dumps({"order_id": "o-981", "amount_eur": 12.5})
            return ChatResponse(messages=Message("assistant", [Content.from_function_call(call_id="call-981", name="issue_refund", arguments=asked)]))

        return respond()


agent = Agent(client=Scripted(), tools=[issue_refund], name="refund-agent")


async def handle(request):
    return (await agent.run(request)).text


if __name__ == "__main__":
    print(asyncio.run(handle("refund order o-981")))
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert '@tool(approval_mode="always_require")\ndef issue_refund(' in source and "guard_tool" not in source
    assert (
        '(await guard("shop.handle", lambda: run_with_approvals(agent, request, policy="agents.shop.handle", '
        'run_id=f"shop.handle:{uuid.uuid4()}"))).text'
    ) in source
    assert "from escalated.adapters.agent_framework import run_with_approvals\n" in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project, launch(project, apply_server, preload=FRAMEWORK)


def test_the_refund_waits_for_the_frameworks_approval_until_approved_and_runs_once(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "approve")  # the run returned the call for approval until then
    assert_asked_about_the_refund(decided.asked)
    assert decided.asked["agentId"] == "refund-agent"
    assert_refunded_once(project, decided)


def test_a_rejected_tool_call_never_refunds_and_the_model_hears_why(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "reject")  # the run went on: the model answered the rejection
    assert decided.out.strip().startswith("done: The call was rejected by") and "looks right" in decided.out, decided.out
    assert_never_refunded(project, decided)
