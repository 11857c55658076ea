"""scan -> init --accept-all -> apply on a real CrewAI crew, then a real ``crew.kickoff()`` with a
scripted CrewAI LLM (a ``BaseLLM`` answering in CrewAI's own ReAct text: the refund, then a final
answer) against a real serve. apply gates the money tool through CrewAI's own tool hook:
``@approval_required(policy=...)`` under CrewAI's ``@tool`` (escalated.adapters.crewai), whose
``before_tool_call`` hook holds each call for a reviewer. The refund runs only after a reviewer
approves the tool call over HTTP; a reject blocks it once and for all (a tool raising instead, as
guard_tool does, is retried by CrewAI, which asked the reviewer again), and the model hears why.

``@human_feedback`` (the adapter's feedback provider) reviews a flow step's output after the step ran,
so it cannot hold a crew's tool. CrewAI cannot be installed beside the test extra, so this module runs
in .venv-crewai (the README's test command) and is skipped elsewhere.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

if importlib.util.find_spec("crewai") is None:
    pytest.skip("CrewAI is not in the test extra: this module runs in .venv-crewai (the README's test command)", allow_module_level=True)

from tests.support.applied import (
    applied_shop,
    apply_server_fixture,
    assert_applied_once_and_covered,
    assert_asked_about_the_refund,
    assert_never_refunded,
    finish,
    launch,
    run_and_decide,
)
from tests.support.server import ServerProcess

# CrewAI reports telemetry and traces to its own servers unless told not to: nothing leaves the machine.
QUIET = {"CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false", "OTEL_SDK_DISABLED": "true"}


apply_server = apply_server_fixture("apply-crewai")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = ("crewai", "crewai.llms.base_llm", "crewai.tools")


SHOP = '''\
import json

import stripe
from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool


@tool("issue_refund")
def issue_refund(order_id: str, amount_eur: float) -> str:
    """Refund an order to the customer's card."""
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


class Scripted(BaseLLM):
    """The refund first, then a final answer quoting what the tool returned (CrewAI's ReAct text)."""

    def call(self, messages, tools=None, callbacks=None, available_functions=None, from_task=None, from_agent=None, response_model=None):
        observed = [m["content"] for m in messages[1:] if "Observation:" in str(m.get("content"))]
        if observed:
            said = observed[-1].split("Observation:", 1)[1].strip().splitlines()[0]
            return f"Thought: I know the outcome.\\nFinal Answer: done: {said}"
        asked = json.dumps({"order_id": "o-981", "amount_eur": 12.5})
        return f"Thought: I should refund the order.\\nAction: issue_refund\\nAction Input: {asked}"

    def supports_function_calling(self):
        return False


clerk = Agent(role="Refund clerk", goal="Refund orders", backstory="Careful.", tools=[issue_refund], llm=Scripted(model="scripted"))
refund = Task(description="Refund order o-981: 12.50 EUR", expected_output="What happened", agent=clerk)
crew = Crew(agents=[clerk], tasks=[refund])


def handle():
    return str(crew.kickoff())


if __name__ == "__main__":
    print(handle())
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> Path:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert '@tool("issue_refund")\n@approval_required(policy="agents.shop.handle")\ndef issue_refund(' in source
    assert "guard_tool" not in source
    assert 'return str(guard("shop.handle", lambda: crew.kickoff()))' in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project


def test_the_refund_runs_only_after_the_reviewer_approves_the_tool_call(tmp_path, apply_server):
    project = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, launch(project, apply_server, preload=FRAMEWORK, **QUIET), apply_server, "approve")
    assert_asked_about_the_refund(decided.asked)
    assert decided.ledger_at_final == "o-981 1250\n"  # before the crew's final answer
    assert decided.returncode == 0, decided.err
    assert decided.out.strip().endswith("done: refunded 12.50 EUR for order o-981"), decided.out
    assert (project / "refunds.log").read_text() == "o-981 1250\n"  # once


def test_a_rejected_tool_call_never_refunds_and_the_model_hears_why(tmp_path, apply_server):
    project = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, launch(project, apply_server, preload=FRAMEWORK, **QUIET), apply_server, "reject")
    # the crew went on: the escalation after the reject is its final answer, not the tool again
    assert decided.final is not None and decided.final["subject"]["type"] != "tool_call", decided.final
    assert "done: The call was rejected by" in decided.out and "looks right" in decided.out, decided.out
    assert_never_refunded(project, decided)


def test_a_tool_call_no_reviewer_can_decide_is_blocked_not_run(tmp_path, apply_server, unused_tcp_port):
    # CrewAI runs a tool whose hook raised: the hook blocks the call itself when the server is out of reach.
    project = _applied(tmp_path, apply_server)
    down = launch(project, apply_server, preload=FRAMEWORK, **QUIET, ESCALATED_URL=f"http://127.0.0.1:{unused_tcp_port}")
    _out, err = finish(down)
    assert not (project / "refunds.log").exists(), err
    assert down.returncode != 0 and "GuardFailedClosed" in err, err  # the guard around the crew fails closed too
