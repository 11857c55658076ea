"""apply on a required CrewAI crew: CrewAI's own tool hook, @approval_required(policy=...) under
CrewAI's @tool (escalated.adapters.crewai's before_tool_call hook holds each call for a reviewer),
on each risky tool function the crew reaches, in its module or another; the run is left as it is.
scan counts the crew covered only while every risky tool it reaches is marked. The end-to-end runs
are in tests/integration/test_apply_crewai.py (in CrewAI's own environment)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main

TOOLS = '''\
import subprocess

from crewai.tools import tool


@tool("run_shell")
def run_shell(command: str) -> str:
    """Run a shell command."""
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout
'''

CREW = '''\
import stripe
from crewai import Agent, Crew, Task
from crewai.tools import tool

from app.tools import run_shell


@tool("issue_refund")
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    stripe.Refund.create(charge=order_id)
    return "refunded"


clerk = Agent(role="Clerk", goal="Refund orders", backstory="Careful.", tools=[issue_refund, run_shell])
crew = Crew(agents=[clerk], tasks=[Task(description="Refund o-1", expected_output="What happened", agent=clerk)])


def handle():
    return crew.kickoff()
'''


def _project(root: Path) -> Path:
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "tools.py").write_text(TOOLS)
    (root / "app" / "shop.py").write_text(CREW)
    assert CliRunner().invoke(main, ["contracts", "init", str(root), "--accept-all"]).exit_code == 0
    result = CliRunner().invoke(main, ["contracts", "apply", str(root), "--yes"])
    assert result.exit_code == 0, result.output
    return root / "app"


def test_a_crews_risky_tools_wait_in_crewais_own_tool_hook_wherever_they_are(tmp_path):
    app = _project(tmp_path)
    shop, tools = (app / "shop.py").read_text(), (app / "tools.py").read_text()
    assert '@tool("issue_refund")\n@approval_required(policy="agents.shop.handle")\ndef issue_refund(' in shop
    assert '@tool("run_shell")\n@approval_required(policy="agents.shop.handle")\ndef run_shell(' in tools
    imported = "from escalated.adapters.crewai import approval_required\n"
    assert imported in shop and imported in tools
    assert 'return guard("shop.handle", lambda: crew.kickoff())' in shop  # the run itself as it was
    assert "guard_tool" not in shop + tools
    assert CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)]).exit_code == 0
    again = CliRunner().invoke(main, ["contracts", "apply", str(tmp_path), "--yes"])
    assert "Nothing to apply" in again.output


def test_scan_names_the_crew_tool_no_hook_holds(tmp_path):
    app = _project(tmp_path)
    tools = app / "tools.py"
    tools.write_text(tools.read_text().replace('@approval_required(policy="agents.shop.handle")\n', ""))
    result = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert result.exit_code == 1
    assert "not guarded at the tool: run_shell (app/tools.py:" in result.output
    assert "issue_refund (app" not in result.output


def test_a_crew_whose_risky_tools_all_wait_in_the_hook_is_covered_by_it_without_a_contract(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    marked = "from escalated.adapters.crewai import approval_required\n"
    tools = TOOLS.replace('@tool("run_shell")\n', '@tool("run_shell")\n@approval_required(policy="ops")\n')
    (tmp_path / "app" / "tools.py").write_text(marked + tools)
    shop = CREW.replace('@tool("issue_refund")\n', '@tool("issue_refund")\n@approval_required(policy="ops")\n')
    (tmp_path / "app" / "shop.py").write_text(marked + shop)
    scanned = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert scanned.exit_code == 0 and "covered: yes, by existing gate tool-approval" in scanned.output
    (tmp_path / "app" / "tools.py").write_text(marked + TOOLS)
    scanned = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert scanned.exit_code == 1 and "existing gate" not in scanned.output
