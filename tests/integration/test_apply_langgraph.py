"""scan -> init --accept-all -> apply on a real LangGraph prebuilt agent, then a real run with a
LangChain fake chat model scripting the tool call against a real serve. Without a checkpointer apply
guards the money tool with guard_tool (the graph calls it synchronously, where the guard waits for the
reviewer); with one, through LangGraph's own interrupt (the tool interrupts with its name and
arguments, escalated.adapters.langgraph.invoke_with_approvals files it and resumes the thread with the
decision). Either way the refund runs only after a reviewer approves the tool call over HTTP, and
never after a reject; the tool's ToolRuntime (the run's context) is not the evidence."""

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

apply_server = apply_server_fixture("apply-langgraph")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = (
    "langchain_core.language_models.fake_chat_models",
    "langchain_core.messages",
    "langchain_core.tools",
    "langgraph.prebuilt",
    "langgraph.checkpoint.memory",
)

SHOP = '''\
import warnings
from dataclasses import dataclass

import stripe
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolRuntime

with warnings.catch_warnings():  # moved to langchain.agents in LangGraph 1.0; the prebuilt one is what apps use
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent


@dataclass
class Shop:
    crm_notes: str = "private notes the reviewer never needs"


@tool
def issue_refund(order_id: str, amount_eur: float, runtime: ToolRuntime[Shop]) -> str:
    """Refund an order."""
    assert runtime.context.crm_notes
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


class Scripted(GenericFakeChatModel):
    """The tool call first, then an answer quoting what the tool returned."""

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        answers = [m for m in messages if isinstance(m, ToolMessage)]
        if answers:
            self.messages = iter([AIMessage(content=f"done: {answers[-1].content}")])
        else:
            call = {"name": "issue_refund", "args": {"order_id": "o-981", "amount_eur": 12.5}, "id": "call-981"}
            self.messages = iter([AIMessage(content="", tool_calls=[call])])
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


agent = create_react_agent(Scripted(messages=iter([])), [issue_refund], context_schema=Shop)


def handle(request):
    result = agent.invoke({"messages": [("user", request)]}, context=Shop())
    return result["messages"][-1].content


if __name__ == "__main__":
    print(handle("refund order o-981"))
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert '@tool\n@guard_tool("shop.handle")\ndef issue_refund(' in source
    assert 'guard("shop.handle", lambda: agent.invoke({"messages": [("user", request)]}, context=Shop()))' in source
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
    decided = run_and_decide(project, run, apply_server, "reject", final_answer=False)
    # guard_tool raises inside the graph's tool node (LangGraph re-raises a tool's own error): the run
    # ends there, nothing refunded and no final answer to review.
    assert decided.returncode != 0 and "EscalationRejected" in decided.err, decided.err
    assert not (project / "refunds.log").exists()


# The same shop on a checkpointer: LangGraph can pause the run at the tool and resume it.
SAVED_SHOP = SHOP.replace(
    "agent = create_react_agent(Scripted(messages=iter([])), [issue_refund], context_schema=Shop)",
    "agent = create_react_agent(Scripted(messages=iter([])), [issue_refund], context_schema=Shop, checkpointer=InMemorySaver())",
).replace(
    'result = agent.invoke({"messages": [("user", request)]}, context=Shop())',
    'result = agent.invoke({"messages": [("user", request)]}, {"configurable": {"thread_id": "refund-o-981"}}, context=Shop())',
).replace(
    "from langgraph.prebuilt import ToolRuntime", "from langgraph.checkpoint.memory import InMemorySaver\nfrom langgraph.prebuilt import ToolRuntime"
)


def _applied_on_a_checkpointer(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    assert SAVED_SHOP.count("InMemorySaver") == 2 and "refund-o-981" in SAVED_SHOP
    project, policy, source = applied_shop(tmp_path, SAVED_SHOP, scan_first=False)
    assert "@tool\n@interrupt_for_approval\ndef issue_refund(" in source and "guard_tool" not in source
    assert (
        'guard("shop.handle", lambda: invoke_with_approvals(agent, {"messages": [("user", request)]}, '
        '{"configurable": {"thread_id": "refund-o-981"}}, context=Shop(), policy="agents.shop.handle"))'
    ) in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project, launch(project, apply_server, preload=FRAMEWORK)


def test_on_a_checkpointer_the_refund_waits_in_langgraphs_interrupt_until_approved(tmp_path, apply_server):
    project, run = _applied_on_a_checkpointer(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "approve")  # paused at the interrupt until then
    assert_asked_about_the_refund(decided.asked)
    assert decided.asked["runId"] == "refund-o-981"  # the thread is the run
    assert_refunded_once(project, decided)


def test_on_a_checkpointer_a_rejected_tool_call_never_refunds_and_the_model_hears_why(tmp_path, apply_server):
    project, run = _applied_on_a_checkpointer(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "reject")  # the run went on: the model answered the rejection
    assert decided.out.strip().startswith("done: The call was rejected by") and "looks right" in decided.out
    assert_never_refunded(project, decided)
