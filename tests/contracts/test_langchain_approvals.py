"""apply on a required LangChain create_agent run: LangChain's own HumanInTheLoopMiddleware naming each
risky tool (added, or extended where the agent has one), the run through the LangGraph adapter's
invoke_with_approvals, where the agent is built beside the run with a checkpointer; guard_tool at the
tool where it cannot pause. scan counts the middleware as a tool's gate only where it interrupts on that
tool every time. The end-to-end runs are in tests/integration/test_apply_langchain.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main
from tests.contracts.langchain_shop import RISKY_TOOLS, apply_and_reapply, assert_guard_tool_on_both

APP = (
    '''\
import subprocess

import stripe
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, ModelCallLimitMiddleware
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver


'''
    + RISKY_TOOLS
    + '''

agent = create_agent(ChatOpenAI(), [issue_refund, run_shell]{builder})


def handle(request, thread_id):
    return agent.invoke({{"messages": [("user", request)]}}, {{"configurable": {{"thread_id": thread_id}}}})
'''
)
SAVER = ", checkpointer=InMemorySaver()"
BOTH = '{"issue_refund": {"allowed_decisions": ["approve", "reject"]}, "run_shell": {"allowed_decisions": ["approve", "reject"]}}'


def _applied(root: Path, builder: str) -> str:
    (root / "shop.py").write_text(APP.format(builder=builder))
    assert CliRunner().invoke(main, ["contracts", "init", str(root), "--accept-all"]).exit_code == 0
    apply_and_reapply(root)
    return (root / "shop.py").read_text()


@pytest.mark.parametrize(
    ("builder", "written"),
    [
        (SAVER, f"checkpointer=InMemorySaver(), middleware=[HumanInTheLoopMiddleware(interrupt_on={BOTH})])"),
        (
            SAVER + ", middleware=[ModelCallLimitMiddleware(run_limit=5)]",
            f"middleware=[ModelCallLimitMiddleware(run_limit=5), HumanInTheLoopMiddleware(interrupt_on={BOTH})])",
        ),
        (  # the middleware it has: the missing tool is added, the one it names is left as it is
            SAVER + ', middleware=[HumanInTheLoopMiddleware(interrupt_on={"issue_refund": True})]',
            'middleware=[HumanInTheLoopMiddleware(interrupt_on={"issue_refund": True, '
            '"run_shell": {"allowed_decisions": ["approve", "reject"]}})])',
        ),
    ],
    ids=["no-middleware", "other-middleware", "middleware-naming-one"],
)
def test_the_agents_middleware_interrupts_on_each_risky_tool_and_the_run_goes_through_the_adapter(tmp_path, builder, written):
    source = _applied(tmp_path, builder)
    assert written in source
    assert (
        'guard("shop.handle", lambda: invoke_with_approvals(agent, {"messages": [("user", request)]}, '
        '{"configurable": {"thread_id": thread_id}}, policy="agents.shop.handle"))'
    ) in source
    assert "@tool\ndef issue_refund(" in source and "@tool\ndef run_shell(" in source
    assert "guard_tool" not in source and "interrupt_for_approval" not in source


@pytest.mark.parametrize(
    "builder",
    ["", ", checkpointer=None", SAVER + ", middleware=MIDDLEWARE", SAVER + ", middleware=[HumanInTheLoopMiddleware(interrupt_on=GATES)]"],
    ids=["no-checkpointer", "checkpointer-none", "middleware-not-written-there", "interrupt-on-not-written-there"],
)
def test_an_agent_apply_cannot_give_the_middleware_keeps_guard_tool(tmp_path, builder):
    source = _applied(tmp_path, builder)
    assert_guard_tool_on_both(source)
    assert "invoke_with_approvals" not in source and source.count("HumanInTheLoopMiddleware(") == builder.count("HumanInTheLoopMiddleware(")


@pytest.mark.parametrize(
    ("gates", "covered"),
    [
        ('{"issue_refund": True, "run_shell": {"allowed_decisions": ["approve", "reject"]}}', True),
        ('{"issue_refund": True}', False),  # run_shell runs unasked
        ('{"issue_refund": True, "run_shell": False}', False),
        ('{"issue_refund": True, "run_shell": {"allowed_decisions": ["approve"], "when": lambda r: False}}', False),
    ],
    ids=["both", "one-missing", "one-false", "one-with-when"],
)
def test_the_middleware_is_the_runs_existing_gate_only_when_it_asks_about_every_risky_tool(tmp_path, gates, covered):
    builder = f"{SAVER}, middleware=[HumanInTheLoopMiddleware(interrupt_on={gates})]"
    (tmp_path / "shop.py").write_text(APP.format(builder=builder))
    scanned = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert ("covered: yes, by existing gate langgraph.interrupt" in scanned.output) is covered, scanned.output
    assert (scanned.exit_code == 0) is covered
