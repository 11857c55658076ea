"""scan -> init --accept-all -> apply on a real smolagents ToolCallingAgent with a project ``Tool``
class, then a real ``agent.run`` with a scripted smolagents ``Model`` (its own extension point for a
model provider: the refund call, then ``final_answer``) against a real serve. smolagents has no approval
hook of its own, so apply guards the tool where smolagents runs it: ``@guard_tool`` on the class's
``forward``. The reviewer sees the tool's own name and description (the class's ``name`` and
``description``) and the arguments the model chose, never the tool object; the refund runs only after
a reviewer approves over HTTP, and after a reject never: smolagents hands the rejection to the model as
the tool's error and the run goes on to its final answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.applied import (
    applied_shop,
    apply_server_fixture,
    assert_applied_once_and_covered,
    assert_asked_about_the_refund,
    assert_never_refunded,
    launch,
    run_and_decide,
)
from tests.support.server import ServerProcess

apply_server = apply_server_fixture("apply-smolagents")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = ("smolagents", "smolagents.models")

SHOP = '''\
import stripe
from smolagents import Tool, ToolCallingAgent
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model


class RefundTool(Tool):
    name = "issue_refund"
    description = "Refund an order to the customer's card."
    inputs = {"order_id": {"type": "string", "description": "the order"}, "amount_eur": {"type": "number", "description": "in EUR"}}
    output_type = "string"
    crm_notes = "private notes the reviewer never needs"

    def forward(self, order_id: str, amount_eur: float) -> str:
        stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
        return f"refunded {amount_eur:.2f} EUR for order {order_id}"


class Scripted(Model):
    """The refund first, then a final answer quoting what the tool said."""

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
        said = [m.content for m in messages if m.role == MessageRole.TOOL_RESPONSE]
        if said:
            text = said[-1][0]["text"] if isinstance(said[-1], list) else str(said[-1])
            name, arguments = "final_answer", {"answer": "done: " + text.split("\\n")[1].strip()}
        else:
            name, arguments = "issue_refund", {"order_id": "o-981", "amount_eur": 12.5}
        call = ChatMessageToolCall(id=f"call-{name}", type="function", function=ChatMessageToolCallFunction(name=name, arguments=arguments))
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


agent = ToolCallingAgent(tools=[RefundTool()], model=Scripted(model_id="scripted"), max_steps=3, verbosity_level=0)


def handle(request):
    return str(agent.run(request))


if __name__ == "__main__":
    print("ANSWER", handle("refund order o-981"))
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert '    @guard_tool("shop.handle")\n    def forward(self, order_id: str, amount_eur: float) -> str:' in source
    assert 'return str(guard("shop.handle", lambda: agent.run(request)))' in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project, launch(project, apply_server, preload=FRAMEWORK)


def _answer(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("ANSWER "))


def test_the_refund_runs_only_after_the_reviewer_approves_the_tool_call(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "approve")
    assert_asked_about_the_refund(decided.asked)
    assert decided.asked["evidence"][2] == "What it does: Refund an order to the customer's card."  # the class's description
    assert decided.ledger_at_final == "o-981 1250\n"  # refunded before the run's final answer
    assert decided.returncode == 0, decided.err
    assert _answer(decided.out) == "ANSWER done: refunded 12.50 EUR for order o-981"
    assert (project / "refunds.log").read_text() == "o-981 1250\n"  # once


def test_a_rejected_tool_call_never_refunds_and_the_model_hears_why(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "reject")  # the run went on: the model read the rejection
    assert decided.returncode == 0, decided.err
    answer = _answer(decided.out)
    assert "EscalationRejected" in answer and "looks right" in answer, decided.out
    assert_never_refunded(project, decided)
