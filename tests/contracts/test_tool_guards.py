"""Point 11: an agent run under a ``required`` contract is guarded at the tools it runs.

Through the real CLI (``contracts scan`` and ``contracts apply``) on a small
OpenAI Agents project: the guard around ``Runner.run_sync`` decides after the
refund already ran, so the refund tool itself must carry ``@guard_tool``.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main

AGENT = '''\
import stripe
from agents import Agent, Runner, function_tool


@function_tool
def issue_refund(charge_id: str) -> str:
    stripe.Refund.create(charge=charge_id)
    return "refunded"


@function_tool
def order_status(order_id: str) -> str:
    return "shipped"


billing = Agent(name="billing", tools=[issue_refund, order_status])


def run(request: str) -> str:
    return Runner.run_sync(billing, request).final_output
'''
GUARDED_AT_THE_CALL = AGENT.replace(
    "    return Runner.run_sync(billing, request).final_output",
    '    return guard("billing.run", lambda: Runner.run_sync(billing, request)).final_output',
).replace("import stripe\n", "import stripe\nfrom escalated.guard import guard\n")


def contract(mode: str) -> str:
    return f'''\
version = 1
[contracts."billing.run"]
path = "agent/billing.py"
function = "run"
index = 0
provider = "openai"
api = "agents.Runner.run_sync"
mode = "{mode}"
rules = ["R2"]
policy = "agents.billing"
question = "May the agent do this?"
choices = [{{ id = "approve", label = "Approve" }}, {{ id = "reject", label = "Reject" }}]
approve_choices = ["approve"]
'''


def project(root: Path, *, source: str = AGENT, mode: str = "required") -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "billing.py").write_text(source)
    (root / "escalated.contracts.toml").write_text(contract(mode))
    return root


def run_cli(*args: str):
    return CliRunner().invoke(main, ["contracts", *args])


def test_a_required_run_guarded_only_around_the_call_is_uncovered_naming_the_tool_to_guard(tmp_path):
    result = run_cli("scan", str(project(tmp_path, source=GUARDED_AT_THE_CALL)))
    assert result.exit_code == 1, result.output
    assert "decides after its tools ran; not guarded at the tool: issue_refund (agent/billing.py:7)" in result.output


def test_apply_guards_the_refund_tool_under_the_framework_decorator_and_leaves_the_read_only_tool(tmp_path):
    root = project(tmp_path)
    result = run_cli("apply", str(root), "--yes")
    assert result.exit_code == 0, result.output
    assert "Wrapped 1 call(s) and 1 tool(s) guarded at the tool in 1 file(s)" in result.output
    source = (root / "agent" / "billing.py").read_text()
    # The Agents SDK calls a sync tool inside its event loop: the guard there must be awaitable.
    assert '@function_tool\n@guard_tool("billing.run", awaitable=True)\ndef issue_refund(' in source
    assert "@function_tool\ndef order_status(" in source
    assert "from escalated.guard import guard_tool\n" in source
    assert run_cli("scan", str(root)).exit_code == 0


def test_apply_guards_the_tools_of_a_run_already_wrapped_at_the_call(tmp_path):
    root = project(tmp_path, source=GUARDED_AT_THE_CALL)
    result = run_cli("apply", str(root), "--yes")
    assert result.exit_code == 0, result.output
    assert "Wrapped 0 call(s) and 1 tool(s) guarded at the tool in 1 file(s)" in result.output
    assert run_cli("scan", str(root)).exit_code == 0


def test_a_second_apply_leaves_the_guarded_tools_as_they_are(tmp_path):
    root = project(tmp_path)
    assert run_cli("apply", str(root), "--yes").exit_code == 0
    before = (root / "agent" / "billing.py").read_text()
    result = run_cli("apply", str(root), "--yes")
    assert result.exit_code == 0 and "Nothing to apply" in result.output
    assert (root / "agent" / "billing.py").read_text() == before


def test_a_reviewed_run_is_wrapped_at_the_call_only(tmp_path):
    root = project(tmp_path, mode="reviewed")
    assert run_cli("apply", str(root), "--yes").exit_code == 0
    source = (root / "agent" / "billing.py").read_text()
    assert "guard_tool" not in source and 'guard("billing.run", lambda: Runner.run_sync(' in source


def test_explain_says_apply_guards_a_required_runs_tools(tmp_path):
    result = run_cli("explain", "required")
    assert result.exit_code == 0
    assert "apply adds @guard_tool" in " ".join(result.output.split())


def test_json_names_each_risky_tool_of_a_run_and_what_guards_it(tmp_path):
    import json

    root = project(tmp_path)
    assert run_cli("apply", str(root), "--yes").exit_code == 0
    call = json.loads(run_cli("scan", str(root), "--format", "json").output)["calls"][0]
    assert call["runner"] is True
    assert call["riskyTools"] == [
        {"tool": "issue_refund", "path": "agent/billing.py", "line": 9, "function": "issue_refund", "guardId": "billing.run", "needsApproval": False}
    ]
