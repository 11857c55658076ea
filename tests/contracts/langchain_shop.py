"""What the LangGraph-family apply tests share (LangChain's create_agent in test_langchain_approvals,
LangGraph's prebuilt agent in test_langgraph_approvals): the two risky tools, the commands a user runs
once the contract is accepted, and what apply writes where the run cannot pause at the tool."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main

# A refund and a shell: both irreversible, so a required run gates both.
RISKY_TOOLS = '''\
@tool
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    stripe.Refund.create(charge=order_id)
    return "refunded"


@tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout
'''


def apply_and_reapply(root: Path) -> None:
    """``apply`` succeeds, ``scan`` then finds the run covered (exit 0), and a second ``apply`` has nothing to do."""
    result = CliRunner().invoke(main, ["contracts", "apply", str(root), "--yes"])
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(main, ["contracts", "scan", str(root)]).exit_code == 0  # covered either way
    assert "Nothing to apply" in CliRunner().invoke(main, ["contracts", "apply", str(root), "--yes"]).output


def assert_guard_tool_on_both(source: str) -> None:
    """Where the run cannot pause at the tool, apply guards each risky tool with guard_tool."""
    assert '@tool\n@guard_tool("shop.handle")\ndef issue_refund(' in source
    assert '@tool\n@guard_tool("shop.handle")\ndef run_shell(' in source
