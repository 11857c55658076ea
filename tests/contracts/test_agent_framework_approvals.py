"""apply on a required Microsoft Agent Framework agent run: the framework's own tool approval
(approval_mode="always_require" on each risky @tool) and the run through
escalated.adapters.agent_framework's run_with_approvals, where the agent is built beside the run and its
tools; guard_tool at the tool where the run cannot go through the adapter or the tool has no @tool to
extend. The end-to-end runs are in tests/integration/test_apply_agent_framework.py."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main
from tests.contracts.langchain_shop import apply_and_reapply

APP = '''\
import subprocess

import stripe
from agent_framework import {agent_class}, tool
from agent_framework.openai import OpenAIChatClient


@tool{refund_options}
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    stripe.Refund.create(charge=order_id)
    return "refunded"


def run_shell(command: str) -> str:
    """Run a shell command."""
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


agent = {agent_class}(client=OpenAIChatClient(), tools=[issue_refund, run_shell], name="ops")


async def handle(request):
    return (await {run}).text
'''


def _applied(root: Path, *, refund_options: str = "", run: str = "agent.run(request)", agent_class: str = "Agent") -> str:
    (root / "shop.py").write_text(APP.format(refund_options=refund_options, run=run, agent_class=agent_class))
    assert CliRunner().invoke(main, ["contracts", "init", str(root), "--accept-all"]).exit_code == 0
    apply_and_reapply(root)
    return (root / "shop.py").read_text()


def test_a_run_of_an_agent_built_beside_it_asks_the_frameworks_approval(tmp_path):
    source = _applied(tmp_path)
    assert '@tool(approval_mode="always_require")\ndef issue_refund(' in source
    assert (
        'return (await guard("shop.handle", lambda: run_with_approvals(agent, request, policy="agents.shop.handle", '
        'run_id=f"shop.handle:{uuid.uuid4()}"))).text'
    ) in source
    assert "from escalated.adapters.agent_framework import run_with_approvals\n" in source and "import uuid\n" in source
    # a plain function has no @tool to extend: guarded at the tool, which the framework calls like any function
    assert '@guard_tool("shop.handle")\ndef run_shell(' in source


def test_the_name_before_1_0_is_routed_the_same(tmp_path):
    source = _applied(tmp_path, agent_class="ChatAgent")
    assert '@tool(approval_mode="always_require")\ndef issue_refund(' in source
    assert "lambda: run_with_approvals(agent, request," in source


def test_a_tool_whose_author_chose_never_require_is_guarded_at_the_tool_instead(tmp_path):
    # apply does not overrule the author's approval_mode; the required run's refund is still held, by guard_tool.
    source = _applied(tmp_path, refund_options='(approval_mode="never_require")')
    assert '@tool(approval_mode="never_require")\n@guard_tool("shop.handle")\ndef issue_refund(' in source
    assert "lambda: run_with_approvals(agent, request," in source


def test_a_tool_already_asking_approval_is_left_as_it_is(tmp_path):
    source = _applied(tmp_path, refund_options='(description="Refund", approval_mode="always_require")')
    assert '@tool(description="Refund", approval_mode="always_require")\ndef issue_refund(' in source


def test_a_streamed_run_keeps_guard_tool(tmp_path):
    source = _applied(tmp_path, run="agent.run(request, stream=True).get_final_response()")
    assert "run_with_approvals" not in source and "approval_mode" not in source
    assert '@guard_tool("shop.handle", awaitable=True)\ndef issue_refund(' in source or '@guard_tool("shop.handle")\ndef issue_refund(' in source
