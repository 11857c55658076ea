"""scan -> init --accept-all -> apply on a real LangChain create_agent with a checkpointer, then a real
run with a LangChain fake chat model scripting the tool call against a real serve. apply gates the money
tool through LangChain's own hook: the agent gets HumanInTheLoopMiddleware(interrupt_on={"issue_refund":
...}), which pauses the run after the model's turn, before the call; the run goes through
escalated.adapters.langgraph.invoke_with_approvals, which files the call and resumes the thread with the
reviewer's decision. The refund runs only after a reviewer approves the tool call over HTTP, once, and
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

apply_server = apply_server_fixture("apply-langchain")

# What shop.py imports of its framework: its runs fork from a zygote that imported it (tests/support/prefork.py).
FRAMEWORK = (
    "langchain.agents",
    "langchain.tools",
    "langchain_core.language_models.fake_chat_models",
    "langchain_core.messages",
    "langgraph.checkpoint.memory",
)

SHOP = '''\
from dataclasses import dataclass

import stripe
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver


@dataclass
class Shop:
    crm_notes: str = "private notes the reviewer never needs"


@tool
def issue_refund(order_id: str, amount_eur: float, runtime: ToolRuntime[Shop]) -> str:
    """Refund an order."""
    assert runtime.context.crm_notes
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return f"refunded {amount_eur:.2f} EUR for order {order_id}"


@tool
def look_up(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: 12.50 EUR, paid"


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


agent = create_agent(Scripted(messages=iter([])), [issue_refund, look_up], context_schema=Shop, checkpointer=InMemorySaver())


def handle(request):
    result = agent.invoke({"messages": [("user", request)]}, {"configurable": {"thread_id": "refund-o-981"}}, context=Shop())
    return result["messages"][-1].content


if __name__ == "__main__":
    print(handle("refund order o-981"))
'''


def _applied(tmp_path: Path, apply_server: ServerProcess) -> tuple[Path, subprocess.Popen]:
    project, policy, source = applied_shop(tmp_path, SHOP)
    assert (
        "checkpointer=InMemorySaver(), middleware=[HumanInTheLoopMiddleware(interrupt_on="
        '{"issue_refund": {"allowed_decisions": ["approve", "reject"]}})])'
    ) in source
    assert "from langchain.agents.middleware import HumanInTheLoopMiddleware\n" in source
    assert (
        'guard("shop.handle", lambda: invoke_with_approvals(agent, {"messages": [("user", request)]}, '
        '{"configurable": {"thread_id": "refund-o-981"}}, context=Shop(), policy="agents.shop.handle"))'
    ) in source
    assert "@tool\ndef issue_refund(" in source and "guard_tool" not in source and "interrupt_for_approval" not in source
    assert_applied_once_and_covered(project)
    apply_server.cli("policy", "set", policy)
    return project, launch(project, apply_server, preload=FRAMEWORK)


def test_the_refund_waits_in_langchains_middleware_until_approved_and_runs_once(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "approve")  # paused at the middleware until then
    assert_asked_about_the_refund(decided.asked)
    assert decided.asked["runId"] == "refund-o-981"  # the thread is the run
    assert_refunded_once(project, decided)


def test_a_rejected_tool_call_never_refunds_and_the_model_hears_why(tmp_path, apply_server):
    project, run = _applied(tmp_path, apply_server)
    decided = run_and_decide(project, run, apply_server, "reject")  # the run went on: the model answered the rejection
    assert decided.out.strip().startswith("done: User rejected the tool call for `issue_refund`") and "looks right" in decided.out
    assert_never_refunded(project, decided)
