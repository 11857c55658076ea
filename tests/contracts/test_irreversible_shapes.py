"""Runs that reach an irreversible tool through shapes the scan did not see (the irreversible -> required round).

An OpenAI Agents SDK sandbox agent (``agents.sandbox.SandboxAgent``) hands the model tools through its
capabilities: ``Shell()`` runs the commands the model writes in the sandbox, a filesystem or patch
capability edits its files, and with no ``capabilities=`` the SDK's default (``Capabilities.default()``:
Filesystem, Shell, Compaction) does both. Run directly, built by a helper, or offered to a coordinator
as a tool (``lane.as_tool(...)``), such a run reaches code execution. crewai_tools' E2B tools run the
model's shell commands or Python in a networked sandbox, and so does a sandbox session's ``exec``.
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

SANDBOX = """\
from agents import Agent, Runner
from agents.sandbox import SandboxAgent
from agents.sandbox.capabilities import Capabilities, Filesystem, Shell

from .workspace import WorkspaceShellCapability


def _build_agent(model: str) -> SandboxAgent:
    return SandboxAgent(name="workspace", model=model, instructions="Inspect the files, then answer.")


async def default_capabilities(question: str) -> str:
    agent = _build_agent("gpt-5")
    result = await Runner.run(agent, question)
    return str(result.final_output)


def _build_lane(name: str) -> SandboxAgent:
    return SandboxAgent(name=name, instructions="Run the lane's script.", capabilities=[WorkspaceShellCapability()])


async def coordinator(question: str) -> str:
    lanes = [_build_lane(name) for name in ("a", "b")]
    first = _build_lane("first")
    boss = Agent(name="boss", instructions="Call every lane.", tools=[first.as_tool(tool_name="first", tool_description="run")])
    result = await Runner.run(boss, question)
    return str(result.final_output), lanes


async def editor(question: str) -> str:
    agent = SandboxAgent(name="editor", instructions="Edit the notes.", capabilities=[Filesystem()])
    result = await Runner.run(agent, question)
    return str(result.final_output)


async def nothing_offered(question: str) -> str:
    agent = SandboxAgent(name="reader", instructions="Answer from the manifest.", capabilities=[])
    result = await Runner.run(agent, question)
    return str(result.final_output)


async def plain_agent(question: str) -> str:
    agent = Agent(name="plain", instructions="Answer.")
    result = await Runner.run(agent, question)
    return str(result.final_output), Shell


async def spelled_out(question: str) -> str:
    agent = SandboxAgent(name="spelled", instructions="Inspect.", capabilities=Capabilities.default())
    result = await Runner.run(agent, question)
    return str(result.final_output)
"""

CREW = """\
from crewai import Agent, Crew, Task
from crewai_tools import E2BExecTool, E2BPythonTool


def analyse() -> str:
    analyst = Agent(role="analyst", goal="compute", backstory="runs code", tools=[E2BPythonTool()])
    task = Task(description="compute the mean", expected_output="a number", agent=analyst)
    return str(Crew(agents=[analyst], tasks=[task]).kickoff())


def operate() -> str:
    operator = Agent(role="operator", goal="inspect", backstory="runs commands", tools=[E2BExecTool(persistent=True)])
    task = Task(description="list the files", expected_output="a list", agent=operator)
    return str(Crew(agents=[operator], tasks=[task]).kickoff())
"""

CODEX = """\
from agents import Agent, Runner, function_tool
from agents.sandbox import SandboxSession


class Workspace:
    def __init__(self, session: SandboxSession) -> None:
        self._session = session

    async def build(self) -> str:
        result = await self._session.exec("codex exec --full-auto -C /workspace 'build the site'", shell=["bash", "-lc"])
        return str(result.stdout)


def make_agent(workspace: Workspace) -> Agent:
    @function_tool
    async def build_site() -> str:
        \"\"\"Build the site in the sandbox.\"\"\"
        return await workspace.build()

    return Agent(name="orchestrator", instructions="Build the site with the tools.", tools=[build_site])


async def main(session: SandboxSession) -> str:
    workspace = Workspace(session)
    agent = make_agent(workspace)
    result = await Runner.run(agent, "Build it.")
    return str(result.final_output)
"""

PROJECT = {
    "app/__init__.py": "",
    "app/runs.py": SANDBOX,
    "app/workspace.py": "class WorkspaceShellCapability:\n    pass\n",
    "crew.py": CREW,
    "site.py": CODEX,
}


def test_a_sandbox_agent_with_default_capabilities_runs_shell_commands(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, PROJECT)
    assert calls[("app/runs.py", 14)][1:] == ("required", ("R1",))


def test_a_sandbox_agent_offered_as_a_tool_runs_its_shell_capability(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, PROJECT)
    assert calls[("app/runs.py", 26)][1:] == ("required", ("R1",))


def test_the_default_capabilities_spelled_out_run_shell_commands(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, PROJECT)
    assert calls[("app/runs.py", 50)][1:] == ("required", ("R1",))


def test_a_filesystem_capability_edits_files_and_no_capability_offers_nothing(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, PROJECT)
    assert calls[("app/runs.py", 32)][1:] == ("reviewed", ("R6",))
    assert calls[("app/runs.py", 38)][1:] == ("autonomous", ("R11",))
    assert calls[("app/runs.py", 44)][1:] == ("autonomous", ("R11",))  # a plain Agent: no capabilities


def test_crewai_e2b_tools_run_code(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, PROJECT)
    assert calls[("crew.py", 8)][1:] == ("required", ("R1",))
    assert calls[("crew.py", 14)][1:] == ("required", ("R1",))


def test_a_shell_command_an_agents_sdk_sandbox_session_runs_is_code_run(tmp_path: Path) -> None:
    # The tool takes no arguments, but only the run decides to call it: the command it runs
    # (a coding agent, full-auto) is code execution found by what the code does, not by a name.
    calls = scan_calls(tmp_path, PROJECT)
    assert calls[("site.py", 26)][1:] == ("required", ("R1",))
