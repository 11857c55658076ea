"""A required run whose tools the scan cannot see is never counted covered; the text report
shows the contract's own mode beside the recommendation."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main

APP = """\
from agents import Agent, Runner
from escalated.guard import guard

async def go(msg, servers):
    agent = Agent(name="ops", mcp_servers=servers)
    return await guard("ops.go", lambda: Runner.run(agent, msg))
"""
CONTRACT = """\
version = 1

[contracts."ops.go"]
path = "app.py"
function = "go"
index = 0
provider = "openai"
api = "agents.Runner.run"
mode = "{mode}"
rules = ["R7"]
policy = "agents.ops"
question = "May the ops agent act?"
choices = [{{ id = "ok", label = "Yes" }}, {{ id = "no", label = "No" }}]
approve_choices = ["ok"]
"""


def _scan(tmp_path: Path, mode: str) -> tuple[int, str]:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "escalated.contracts.toml").write_text(CONTRACT.format(mode=mode))
    result = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    return result.exit_code, result.output


def test_a_required_run_with_tools_the_scan_cannot_see_is_not_covered(tmp_path: Path) -> None:
    code, out = _scan(tmp_path, "required")
    assert code == 1
    assert "could not see these tools: MCP servers" in out
    assert "contract: required (ops.go)" in out


def test_a_reviewed_run_is_covered_by_its_guard_whatever_its_tools(tmp_path: Path) -> None:
    code, out = _scan(tmp_path, "reviewed")
    assert code == 0, out
    assert "contract: reviewed (ops.go)" in out
