"""What real agent code writes, beyond the call shapes of part 3: generic agents, lazy SDK
proxies, the frameworks' own approval flags, toolkits, agents as tools, Strands."""

from __future__ import annotations

from pathlib import Path

from escalated.contracts.scan.discovery import scan_source, scan_tree

REFUND_TOOL = """
import stripe
from agents import Agent, Runner, RunContextWrapper, function_tool

@function_tool{decorator}
def issue_refund(ctx: RunContextWrapper[dict], charge: str) -> str:
    stripe.Refund.create(charge=charge)
    return "ok"
"""


def test_a_generic_agent_is_an_agent() -> None:
    source = REFUND_TOOL.format(decorator="") + (
        "billing = Agent[dict](name='billing', tools=[issue_refund])\n"
        "async def handle(msg):\n    return (await Runner.run(billing, msg)).final_output\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.mode == "required" and "R2" in call.recommendation.rules
    assert [t.name for t in call.risky_tools] == ["issue_refund"]


def test_a_lazy_proxy_named_like_the_sdk_is_the_sdk(tmp_path: Path) -> None:
    # aider: from aider.llm import litellm, where aider/llm.py holds litellm = LazyLiteLLM().
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "llm.py").write_text(
        "import importlib\nclass LazyLiteLLM:\n    def __getattr__(self, name):\n"
        "        return getattr(importlib.import_module('litellm'), name)\nlitellm = LazyLiteLLM()\n"
    )
    (tmp_path / "pkg" / "models.py").write_text(
        "from pkg.llm import litellm\ndef send(messages):\n    return litellm.completion(model='gpt-4o', messages=messages)\n"
    )
    (call,) = scan_tree(tmp_path).calls
    assert (call.location.path, call.provider, call.api) == ("pkg/models.py", "litellm", "completion")


def test_the_frameworks_own_tool_approval_is_an_existing_gate() -> None:
    gated = REFUND_TOOL.format(decorator="(needs_approval=True)")
    source = gated + "billing = Agent(name='b', tools=[issue_refund])\nasync def go(m):\n    return await Runner.run(billing, m)\n"
    (call,) = scan_source(source, "a.py")
    assert call.existing_gate == "needs_approval"
    pydantic = (
        "import subprocess\nfrom pydantic_ai import Agent\nagent = Agent('openai:gpt-4o')\n"
        "@agent.tool(requires_approval=True)\ndef shell(ctx, cmd: str) -> str:\n"
        "    return subprocess.run(cmd, shell=True).stdout\n"
        "def go(p):\n    return agent.run_sync(p)\n"
    )
    (call,) = scan_source(pydantic, "b.py")
    assert call.recommendation.mode == "required" and call.existing_gate == "requires_approval"
    assert scan_source(pydantic.replace("(requires_approval=True)", ""), "b.py")[0].existing_gate is None


def test_a_built_in_shell_tool_with_needs_approval_is_gated_and_one_without_is_not() -> None:
    source = (
        "from agents import Agent, Runner, ShellTool\n"
        "gated = Agent(name='g', tools=[ShellTool(executor=None, needs_approval=True)])\n"
        "open_ = Agent(name='o', tools=[ShellTool(executor=None)])\n"
        "async def go(m):\n    await Runner.run(gated, m)\n    await Runner.run(open_, m)\n"
    )
    first, second = scan_source(source, "a.py")
    assert first.recommendation.mode == second.recommendation.mode == "required"
    assert (first.existing_gate, second.existing_gate) == ("needs_approval", None)


def test_a_strands_agent_is_called_by_calling_it() -> None:
    source = (
        "import shutil\nfrom strands import Agent, tool\n@tool\ndef wipe(path: str) -> str:\n"
        "    shutil.rmtree(path)\n    return 'gone'\nagent = Agent(tools=[wipe])\nprint(agent('clean up'))\n"
    )
    (call,) = scan_source(source, "a.py")
    assert (call.api, call.recommendation.mode, call.runner) == ("__call__", "required", True)
    assert "R3" in call.recommendation.rules


def test_a_payment_toolkit_moves_money_unless_configured_to_read() -> None:
    source = (
        "from agents import Agent, Runner\nfrom stripe_agent_toolkit.openai.toolkit import StripeAgentToolkit\n"
        "kit = StripeAgentToolkit(secret_key='k', configuration={'actions': {'invoices': {ACTIONS}}})\n"
        "tools = []\ntools.extend(kit.get_tools())\n"
        "agent = Agent(name='a', tools=tools)\nasync def go(m):\n    return await Runner.run(agent, m)\n"
    )
    (call,) = scan_source(source.replace("ACTIONS", "'create': True"), "a.py")
    assert call.recommendation.mode == "required" and "R2" in call.recommendation.rules
    (call,) = scan_source(source.replace("ACTIONS", "'read': True"), "a.py")
    assert call.recommendation.mode == "sampled"


def test_an_agent_offered_as_a_tool_brings_its_tools() -> None:
    source = REFUND_TOOL.format(decorator="") + (
        "billing = Agent(name='billing', tools=[issue_refund])\n"
        "triage = Agent(name='triage', tools=[billing.as_tool(tool_name='billing', tool_description='refunds')])\n"
        "async def go(m):\n    return await Runner.run(triage, m)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.mode == "required" and "R2" in call.recommendation.rules


def test_a_web_search_reads_public_pages_not_private_data() -> None:
    source = (
        "from agents import Agent, Runner, WebSearchTool\nagent = Agent(name='r', tools=[WebSearchTool()])\n"
        "async def go(m):\n    print((await Runner.run(agent, m)).final_output)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.mode == "autonomous"


def test_tools_spread_from_a_helpers_params_are_followed() -> None:
    # anthropic-quickstarts' agent: create(**params) with params = self._params(), tools from the constructor.
    source = (
        "from anthropic import Anthropic\nclass Agent:\n    def __init__(self, tools):\n"
        "        self.tools = list(tools or [])\n        self.client = Anthropic()\n"
        "    def _params(self):\n        return {'model': 'm', 'tools': [t.to_dict() for t in self.tools]}\n"
        "    def loop(self):\n        params = self._params()\n        response = self.client.messages.create(**params)\n"
        "        if response.stop_reason == 'tool_use':\n            return 1\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.mode == "reviewed" and "R7" in call.recommendation.rules


def test_reasons_are_few_decisive_first_and_say_where() -> None:
    helpers = "".join(f"def read_{n}(q: str) -> str:\n    return requests.get(q).text\n" for n in range(8))
    source = (
        "import requests, stripe\nfrom agents import Agent, Runner, function_tool\n" + helpers
        + "@function_tool\ndef refund(charge: str) -> str:\n    stripe.Refund.create(charge=charge)\n    return 'ok'\n"
        + "agent = Agent(name='a', tools=[" + ", ".join(f"function_tool(read_{n})" for n in range(8)) + ", refund])\n"
        + "async def go(m):\n    r = await Runner.run(agent, m)\n    if r.final_output == 'x':\n        return 1\n"
    )
    (call,) = scan_source(source, "app/a.py")
    reasons = call.recommendation.reasons
    assert len(reasons) <= 5 < len(call.findings)
    assert reasons[0].startswith("R2 output moves money: tool refund -> stripe.Refund.create() (app/a.py:")
    assert all("(app/a.py:" in r for r in reasons)


def test_a_helper_of_another_module_is_not_called_a_tool(tmp_path: Path) -> None:
    (tmp_path / "shell.py").write_text("import subprocess\ndef execute(cmd):\n    subprocess.run(cmd, shell=True)\n")
    (tmp_path / "app.py").write_text(
        "from openai import OpenAI\nfrom shell import execute\nclient = OpenAI()\n"
        "def step():\n    out = client.responses.create(model='m', input='x').output_text\n    execute(out)\n"
    )
    (call,) = scan_tree(tmp_path).calls
    assert call.recommendation.mode == "required"
    assert not any("tool " in r for r in call.recommendation.reasons), call.recommendation.reasons


def test_a_file_importing_an_sdk_that_fails_to_parse_is_reported_whatever_the_prefilter_skips(tmp_path: Path) -> None:
    # No call-shaped text at all: the prefilter would not parse it for calls.
    (tmp_path / "types_only.py").write_text("from openai import OpenAI\n\ndef f(:\n    pass\n")
    (tmp_path / "plain.py").write_text("def f(:\n    pass\n")  # no SDK: not this scan's business
    (tmp_path / "app.py").write_text("import types_only\n")
    result = scan_tree(tmp_path)
    assert [e.path for e in result.errors] == ["types_only.py"]
    assert "line 3" in result.errors[0].message


CREW = '''
import smtplib
from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task

class SendEmailTool:
    name: str = "send_email"
    def _run(self, to: str, body: str) -> str:
        smtplib.SMTP("localhost").sendmail("me@x", [to], body)
        return "sent"

@CrewBase
class OutreachCrew:
    @agent
    def writer(self) -> Agent:
        return Agent(config=self.agents_config["writer"], tools=[SendEmailTool()])

    @task
    def write(self) -> Task:
        return Task(config=self.tasks_config["write"])

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
'''


def test_a_crewbase_crew_is_a_crew_in_its_module_and_in_another(tmp_path: Path) -> None:
    (call,) = scan_source(CREW + "\ndef run():\n    OutreachCrew().crew().kickoff(inputs={})\n", "crew.py")
    assert (call.api, call.recommendation.mode, call.runner) == ("kickoff", "required", True)
    assert "R5" in call.recommendation.rules
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "crew.py").write_text(CREW)
    # The template's main.py never names crewai: the call shape alone makes it a candidate.
    (tmp_path / "proj" / "main.py").write_text("from proj.crew import OutreachCrew\n\ndef run():\n    OutreachCrew().crew().kickoff(inputs={})\n")
    (call,) = scan_tree(tmp_path).calls
    assert (call.location.path, call.api, call.recommendation.mode) == ("proj/main.py", "kickoff", "required")


def test_tools_passed_as_a_parameter_are_what_the_module_passes() -> None:
    source = REFUND_TOOL.format(decorator="") + (
        "def build(tools):\n    return Agent(name='b', tools=tools)\n"
        "class Bot:\n    def __init__(self, tools=None):\n        self.tools = list(tools or [])\n"
        "        self.agent = Agent(name='c', tools=self.tools)\n"
        "    async def go(self, m):\n        return await Runner.run(self.agent, m)\n"
        "async def go(m):\n    return await Runner.run(build([issue_refund]), m)\n"
        "bot = Bot(tools=[issue_refund])\n"
    )
    by_function = {c.function: c for c in scan_source(source, "a.py")}
    assert by_function["go"].recommendation.mode == "required"
    assert by_function["Bot.go"].recommendation.mode == "required"
    # A parameter no caller here fills stays tools the scan cannot see.
    alone = REFUND_TOOL.format(decorator="") + "def build(tools):\n    return Agent(name='b', tools=tools)\n" + (
        "async def go(m, tools):\n    return await Runner.run(build(tools), m)\n"
    )
    (call,) = scan_source(alone, "b.py")
    assert call.recommendation.mode == "reviewed" and "R7" in call.recommendation.rules


def test_a_guardrail_classifier_decides_a_tripwire() -> None:
    source = (
        "from agents import Agent, GuardrailFunctionOutput, Runner, input_guardrail\n"
        "checker = Agent(name='check', output_type=bool)\n"
        "@input_guardrail\nasync def relevance(ctx, agent, text):\n"
        "    result = await Runner.run(checker, text)\n"
        "    final = result.final_output_as(bool)\n"
        "    return GuardrailFunctionOutput(output_info=final, tripwire_triggered=not final)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert (call.recommendation.mode, call.recommendation.rules) == ("sampled", ("R10",))
    assert "tripwire" in call.recommendation.reasons[0]


def test_a_run_of_an_agent_imported_from_another_module_runs_its_tools_there(tmp_path: Path) -> None:
    (tmp_path / "defs.py").write_text(REFUND_TOOL.format(decorator="") + "billing = Agent(name='b', tools=[issue_refund])\n")
    (tmp_path / "app.py").write_text(
        "from agents import Runner\nfrom defs import billing\n\nasync def go(m):\n    return await Runner.run(billing, m)\n"
    )
    (call,) = scan_tree(tmp_path).calls
    assert call.recommendation.mode == "required" and call.recommendation.rules == ("R2", "R7")
    assert "tool issue_refund" in call.recommendation.reasons[0] and "(in defs.py)" in call.recommendation.reasons[0]
    assert call.unseen_tools  # its tools' gates are not checked from here: a guard at the call does not cover it


def test_an_agent_of_another_module_that_only_reads_is_not_unseen(tmp_path: Path) -> None:
    (tmp_path / "defs.py").write_text(
        "from agents import Agent, function_tool\n@function_tool\ndef order_status(order_id: str) -> str:\n"
        "    return db.get(order_id)\nbilling = Agent(name='b', tools=[order_status])\n"
    )
    (tmp_path / "app.py").write_text(
        "from agents import Runner\nfrom defs import billing\n\nasync def go(m):\n    return await Runner.run(billing, m)\n"
    )
    (call,) = scan_tree(tmp_path).calls
    assert (call.recommendation.mode, call.recommendation.rules) == ("sampled", ("R9",))
    assert not call.unseen_tools


def test_a_run_of_an_agent_the_scan_cannot_read_is_not_free_text(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "from agents import Runner\nfrom vendored_agents import billing\n\nasync def go(m):\n    return await Runner.run(billing, m)\n"
    )
    (call,) = scan_tree(tmp_path).calls
    assert call.recommendation.mode == "reviewed" and call.recommendation.rules == ("R7",)
    assert "not analysed: the agent 'billing'" in call.recommendation.reasons[0]
    assert call.unseen_tools  # so a required contract guarded at the call is not counted covered
