"""apply on a required Agno agent run: Agno's own confirmation (requires_confirmation=True on each risky
@tool) and the run through escalated.adapters.agno's run_with_approvals (arun_with_approvals for arun),
where the agent is built beside the run and its tools; guard_tool at the tool where the run cannot go
through the adapter or the tool has no @tool to extend. The end-to-end runs are in
tests/integration/test_apply_agno.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main
from tests.contracts.langchain_shop import apply_and_reapply

APP = '''\
import subprocess

import stripe
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.tools import tool


@tool{refund_options}
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    stripe.Refund.create(charge=order_id)
    return "refunded"


def run_shell(command: str) -> str:
    """Run a shell command."""
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[issue_refund, run_shell], name="ops")


{define} handle(request):
    return {run}.content
'''


def _applied(root: Path, *, refund_options: str = "", run: str = "agent.run(request)", define: str = "def") -> str:
    (root / "shop.py").write_text(APP.format(refund_options=refund_options, run=run, define=define))
    assert CliRunner().invoke(main, ["contracts", "init", str(root), "--accept-all"]).exit_code == 0
    apply_and_reapply(root)
    return (root / "shop.py").read_text()


def test_a_run_of_an_agent_built_beside_it_pauses_at_agnos_confirmation(tmp_path):
    source = _applied(tmp_path)
    assert "@tool(requires_confirmation=True)\ndef issue_refund(" in source
    assert (
        'return guard("shop.handle", lambda: run_with_approvals(agent, request, policy="agents.shop.handle", '
        'run_id=f"shop.handle:{uuid.uuid4()}")).content'
    ) in source
    assert "from escalated.adapters.agno import run_with_approvals\n" in source and "import uuid\n" in source
    # a plain function has no @tool to extend: guarded at the tool, which Agno calls like any function
    assert '@guard_tool("shop.handle")\ndef run_shell(' in source
    assert "DeferredToolRequests" not in source and "output_type" not in source  # not Pydantic AI's gate


def test_an_awaited_run_goes_through_the_async_adapter(tmp_path):
    source = _applied(tmp_path, run="(await agent.arun(request))", define="async def")
    assert (
        'await guard("shop.handle", lambda: arun_with_approvals(agent, request, policy="agents.shop.handle", '
        'run_id=f"shop.handle:{uuid.uuid4()}"))'
    ) in source
    assert "from escalated.adapters.agno import arun_with_approvals\n" in source
    assert "@tool(requires_confirmation=True)\ndef issue_refund(" in source


def test_the_tools_own_options_are_kept(tmp_path):
    source = _applied(tmp_path, refund_options='(description="Refund an order to the card")')
    assert '@tool(description="Refund an order to the card", requires_confirmation=True)\ndef issue_refund(' in source


@pytest.mark.parametrize(
    "run",
    ["agent.run(request, stream=False, stream_events=True)", "agent.run(*[request])"],
    ids=["streamed-events", "starred"],
)
def test_a_run_apply_cannot_route_through_the_adapter_keeps_guard_tool(tmp_path, run):
    source = _applied(tmp_path, run=run)
    assert '@tool\n@guard_tool("shop.handle")\ndef issue_refund(' in source
    assert "requires_confirmation" not in source and "run_with_approvals" not in source


TOOLKITS = '''\
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.tools.google.gmail import GmailTools
from agno.tools.shell import ShellTools

kit = ShellTools()
agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[{tools}], name="ops")


def handle(request):
    return agent.run(request).content
'''


def test_a_toolkit_in_the_agents_tools_confirms_its_risky_tools(tmp_path):
    tools = 'ShellTools(), GmailTools(include_tools=["send_email", "search_emails"], requires_confirmation_tools=["send_email_reply"])'
    (tmp_path / "shop.py").write_text(TOOLKITS.format(tools=tools))
    assert CliRunner().invoke(main, ["contracts", "init", str(tmp_path), "--accept-all"]).exit_code == 0
    applied = CliRunner().invoke(main, ["contracts", "apply", str(tmp_path), "--yes"])
    assert applied.exit_code == 0 and "by hand" not in applied.output, applied.output
    source = (tmp_path / "shop.py").read_text()
    assert 'ShellTools(requires_confirmation_tools=["run_shell_command"])' in source
    # the list it has is extended with the risky tool it offers (search_emails only reads)
    assert 'requires_confirmation_tools=["send_email_reply", "send_email"])' in source
    assert "lambda: run_with_approvals(agent, request, policy=" in source
    assert CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)]).exit_code == 0  # covered
    assert "Nothing to apply" in CliRunner().invoke(main, ["contracts", "apply", str(tmp_path), "--yes"]).output


def test_a_toolkit_built_elsewhere_is_left_to_be_gated_by_hand(tmp_path):
    (tmp_path / "shop.py").write_text(TOOLKITS.format(tools="kit"))
    assert CliRunner().invoke(main, ["contracts", "init", str(tmp_path), "--accept-all"]).exit_code == 0
    applied = CliRunner().invoke(main, ["contracts", "apply", str(tmp_path), "--yes"])
    assert "tool ShellTools tools is not a function of the project: guard it at the tool by hand" in applied.output
    assert "requires_confirmation_tools" not in (tmp_path / "shop.py").read_text()
    assert CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)]).exit_code == 1  # still uncovered
