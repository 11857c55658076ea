"""Agent frameworks beyond the first ones, as held-out repositories write them: how a run is
called, where its tools come from, what a framework's default toolkits can do, and its own
approval hook (tests/contracts/corpus/heldout holds a whole module of each)."""

from __future__ import annotations

from escalated.contracts.scan.discovery import scan_source

SMOL_TOOLS = '''
import stripe
from smolagents import LiteLLMModel, ToolCallingAgent, tool

@tool
def refund(charge_id: str) -> str:
    """Refund a charge.

    Args:
        charge_id: the charge
    """
    return stripe.Refund.create(charge=charge_id).id

model = LiteLLMModel(model_id="gpt-4o")
billing = ToolCallingAgent(tools=[refund], model=model, name="billing", description="refunds")
'''


def test_a_smolagents_manager_runs_its_managed_agents_tools() -> None:
    source = SMOL_TOOLS + "manager = ToolCallingAgent(tools=[], model=model, managed_agents=[billing])\nmanager.run('refund ch_1')\n"
    (call,) = scan_source(source, "app.py")
    assert (call.api, call.recommendation.mode, call.recommendation.rules) == ("run", "required", ("R2",))
    assert [t.name for t in call.risky_tools] == ["refund"]


def test_a_smolagents_run_handed_to_a_worker_thread_is_the_call() -> None:
    source = SMOL_TOOLS + "from anyio import to_thread\nasync def chat(task):\n    return await to_thread.run_sync(billing.run, task)\n"
    (call,) = scan_source(source, "app.py")
    assert (call.function, call.api, call.recommendation.mode) == ("chat", "run", "required")


def test_a_gradio_ui_of_an_agent_the_scan_cannot_see_is_not_analysed() -> None:
    source = "from smolagents.gradio_ui import GradioUI\nfrom run import create_agent\nGradioUI(create_agent()).launch()\n"
    (call,) = scan_source(source, "app.py")
    assert call.api == "launch" and call.recommendation.rules == ("R7",)
    assert "not analysed: the scan could not see which agent" in call.recommendation.reasons[0]


def test_smolagents_classes_from_their_modules_and_a_model_called_directly() -> None:
    source = (
        "from smolagents.agents import CodeAgent\nfrom smolagents.models import InferenceClientModel\n"
        "model = InferenceClientModel()\nCodeAgent(tools=[], model=model).run('x')\nprint(model([{'role': 'user', 'content': 'hi'}]).content)\n"
    )
    calls = scan_source(source, "app.py")
    assert [(c.api, c.recommendation.mode) for c in calls] == [("run", "required"), ("__call__", "autonomous")]


def _agno_run(tools: str) -> str:
    imports = "from agno.agent import Agent\nfrom agno.tools.google.gmail import GmailTools\nfrom agno.tools.shell import ShellTools\n"
    return imports + f"agent = Agent(tools=[{tools}])\nagent.run('go')\n"


def test_agno_toolkits_are_judged_by_the_tools_they_offer_as_configured() -> None:
    def rules_of(tools: str) -> tuple[str, ...]:
        (call,) = scan_source(_agno_run(tools), "app.py")
        return call.recommendation.rules

    assert rules_of("GmailTools()") == ("R3", "R5")  # defaults send mail and delete labels
    assert rules_of("GmailTools(send_email=False, send_email_reply=False, delete_custom_label=False)") == ("R9",)
    assert rules_of("GmailTools(exclude_tools=['send_email', 'send_email_reply'])") == ("R3",)
    assert rules_of("GmailTools(include_tools=['search_emails'])") == ("R9",)
    assert rules_of("GmailTools(include_tools=['search_emails', 'send_draft'])") == ("R5",)  # off by default, named
    assert rules_of("ShellTools(enable_run_shell_command=False)") == ("R9",)


def test_agno_requires_confirmation_tools_gate_a_toolkit_only_when_every_risky_tool_is_listed() -> None:
    (gated,) = scan_source(_agno_run("ShellTools(requires_confirmation_tools=['run_shell_command'])"), "app.py")
    assert gated.recommendation.mode == "required" and gated.existing_gate == "tool-approval"
    (partly,) = scan_source(_agno_run("GmailTools(requires_confirmation_tools=['send_email'])"), "app.py")
    assert partly.recommendation.mode == "required" and partly.existing_gate is None


def test_an_agno_toolkit_subclass_is_judged_by_its_methods_and_a_paused_run_chooses_nothing() -> None:
    source = (
        "from agno.agent import Agent\nfrom agno.tools import Toolkit\n"
        "class Notify(Toolkit):\n"
        "    def send_sms(self, phone: str, text: str) -> str:\n"
        "        '''Send a text message to the given phone number.'''\n"
        "        return f'sent to {phone}'\n"
        "    def lookup(self, phone: str) -> str:\n"
        "        '''Look up a contact.'''\n"
        "        return phone\n"
        "agent = Agent(tools=[Notify()])\n"
        "response = agent.run('tell Bob')\n"
        "if response.is_paused:\n"
        "    for requirement in response.active_requirements:\n"
        "        if requirement.needs_confirmation:\n"
        "            requirement.confirm()\n"
    )
    (call,) = scan_source(source, "app.py")
    assert (call.recommendation.mode, call.recommendation.rules) == ("required", ("R5",))


MAF_TOOLS = '''
import stripe
from agent_framework import Agent, tool
from agent_framework.openai import OpenAIChatClient

@tool(approval_mode="{mode}")
def refund(charge_id: str) -> str:
    """Refund a charge."""
    return stripe.Refund.create(charge=charge_id).id

@tool(approval_mode="never_require")
def order_status(order_id: str) -> str:
    """Look up an order."""
    return "shipped"

agent = Agent(client=OpenAIChatClient(), name="billing", tools=[refund, order_status])
'''


def test_a_microsoft_agent_framework_run_is_gated_by_its_tools_approval_mode() -> None:
    source = MAF_TOOLS.replace("{mode}", "always_require") + "async def main():\n    return await agent.run('refund ch_1')\n"
    (call,) = scan_source(source, "app.py")
    assert (call.api, call.provider, call.recommendation.mode, call.existing_gate) == ("run", "openai", "required", "tool-approval")
    assert [t.name for t in call.risky_tools] == ["refund"]
    ungated = MAF_TOOLS.replace("{mode}", "never_require") + (
        "async def main():\n    async for update in agent.run('refund ch_1', stream=True):\n        print(update.text)\n"
    )
    (call,) = scan_source(ungated, "app.py")
    assert (call.recommendation.mode, call.recommendation.rules, call.existing_gate) == ("required", ("R2",), None)


def test_a_microsoft_agent_framework_workflow_runs_every_participants_tools() -> None:
    source = MAF_TOOLS.replace("{mode}", "never_require") + (
        "from agent_framework.orchestrations import SequentialBuilder\n"
        "writer = Agent(client=OpenAIChatClient(), name='writer', instructions='Write.')\n"
        "workflow = SequentialBuilder(participants=[writer, agent]).build()\n"
        "async def main(responses):\n"
        "    stream = workflow.run('refund ch_1', stream=True)\n"
        "    resumed = workflow.run(stream=True, responses=responses)\n"
        "    return stream, resumed\n"
    )
    calls = scan_source(source, "app.py")
    assert [(c.api, c.recommendation.mode, c.recommendation.rules) for c in calls] == [("run", "required", ("R2",))] * 2


def test_microsoft_agent_framework_shells_code_tools_clients_and_declarations() -> None:
    head = (
        "from agent_framework import Agent, FunctionTool\nfrom agent_framework.openai import OpenAIChatClient\n"
        "from agent_framework.tools import LocalShellTool\nclient = OpenAIChatClient()\n"
    )

    def run_of(body: str) -> tuple[str, tuple[str, ...], str | None]:
        (call,) = scan_source(head + body + "agent.run('go')\n", "app.py")
        return call.recommendation.mode, call.recommendation.rules, call.existing_gate

    shell = "shell = LocalShellTool(approval_mode='{}')\nagent = Agent(client=client, tools=[client.get_shell_tool(func=shell.as_function())])\n"
    assert run_of(shell.format("never_require")) == ("required", ("R1",), None)
    assert run_of(shell.format("always_require")) == ("required", ("R1",), "tool-approval")
    code = "from agent_framework.hyperlight import HyperlightExecuteCodeTool\nexecute_code = HyperlightExecuteCodeTool(tools=[])\n"
    assert run_of(code + "agent = Agent(client=client, tools=execute_code)\n")[:2] == ("required", ("R1",))
    # A declaration only: the framework hands the call back and runs nothing.
    assert run_of("agent = Agent(client=client, tools=FunctionTool(name='now', description='The time.'))\n") == ("autonomous", ("R11",), None)
    (direct,) = scan_source("from agent_framework.anthropic import AnthropicClient\nprint(AnthropicClient().get_response('hi'))\n", "app.py")
    assert (direct.provider, direct.api) == ("anthropic", "get_response")


def test_a_microsoft_agent_framework_method_tool_and_a_paused_run_choosing_nothing() -> None:
    source = (
        "import stripe\nfrom agent_framework import Agent, tool\nfrom agent_framework.openai import OpenAIChatClient\n"
        "class Billing:\n"
        "    def refund(self, charge_id: str) -> str:\n"
        "        return stripe.Refund.create(charge=charge_id).id\n"
        "    def add(self, a: int, b: int) -> int:\n"
        "        return a + b\n"
        "billing = Billing()\n"
        "agent = Agent(client=OpenAIChatClient())\n"
        "async def main(tools):\n"
        "    refunded = await agent.run('refund', tools=[tool(description='Refund.')(billing.refund)])\n"
        "    added = await agent.run('add', tools=[tool(description='Add.')(billing.add)])\n"
        "    while len(added.user_input_requests) > 0:\n"
        "        added = await agent.run([])\n"
        "    return refunded\n"
    )
    calls = scan_source(source, "app.py")
    assert [(c.location.line, c.recommendation.mode, c.recommendation.rules) for c in calls] == [
        (12, "required", ("R2",)), (13, "autonomous", ("R11",)), (15, "autonomous", ("R11",)),
    ]


def test_a_strands_tool_that_runs_another_agent_does_what_that_agents_tools_do() -> None:
    source = (
        "from strands import Agent, tool\nfrom strands_tools import shell, current_time, file_read\n"
        "coder = Agent(tools=[shell])\n"
        "clock = Agent(tools=[current_time])\n"
        "@tool\ndef code_assistant(query: str) -> str:\n    '''Coding assistant.'''\n    return str(coder(query))\n"
        "@tool\ndef clock_assistant(query: str) -> str:\n    '''What time it is.'''\n    return str(clock(query))\n"
        "coordinator = Agent(tools=[code_assistant])\n"
        "timekeeper = Agent(tools=[clock_assistant])\n"
        "reader = Agent(tools=[file_read])\n"
        "coordinator('fix the build')\ntimekeeper('what time is it')\nreader('summarise notes.txt')\n"
    )
    calls = {c.location.line: (c.recommendation.mode, c.recommendation.rules) for c in scan_source(source, "app.py")}
    # The tool bodies' runs are calls too (lines 8 and 12); the coordinator's is code execution by code, not by name.
    assert calls[16] == ("required", ("R1",)) and calls[8] == ("required", ("R1",))
    assert calls[12] == ("autonomous", ("R11",))  # current_time reads nothing private
    assert calls[18] == ("sampled", ("R9",))  # file_read reads files: private data


LLAMA = '''
import stripe
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.workflow import Context
from llama_index.llms.anthropic import Anthropic
from llama_index.tools.tavily_research import TavilyToolSpec

def refund(charge_id: str) -> str:
    """Refund a charge."""
    return stripe.Refund.create(charge=charge_id).id

async def remember(ctx: Context, name: str) -> str:
    """Remember the user's name."""
    state = await ctx.get("state")
    state["name"] = name
    await ctx.set("state", state)
    return f"Name set to {name}"

search = TavilyToolSpec(api_key="k").to_tool_list()
'''


def test_llamaindex_agent_workflows_run_their_agents_tools() -> None:
    source = LLAMA + (
        "billing = FunctionAgent(name='billing', tools=[refund], llm=Anthropic(model='claude'))\n"
        "greeter = AgentWorkflow.from_tools_or_functions([remember] + search, llm=Anthropic(model='claude'))\n"
        "team = AgentWorkflow(agents=[FunctionAgent(name='research', tools=search), billing], root_agent='research')\n"
        "async def main(ctx):\n"
        "    await greeter.run(user_msg='I am Ann', ctx=ctx)\n"
        "    return await team.run(user_msg='refund ch_1')\n"
    )
    calls = [(c.api, c.provider, c.recommendation.mode, c.recommendation.rules) for c in scan_source(source, "app.py")]
    assert calls == [("run", "anthropic", "autonomous", ("R11",)), ("run", "openai", "required", ("R2",))]


def test_a_llamaindex_workflow_steps_model_call_and_the_state_it_routes_by() -> None:
    source = (
        "from llama_index.core.workflow import Context, Workflow, step, StopEvent\n"
        "class Router(Workflow):\n"
        "    @step\n"
        "    async def route(self, ctx: Context, ev) -> StopEvent:\n"
        "        llm = await ctx.get('llm')\n"
        "        response = await llm.achat_with_tools(ev.tools, chat_history=ev.history)\n"
        "        choice = llm.get_tool_calls_from_response(response)[0].tool_kwargs['agent']\n"
        "        await ctx.set('active_speaker', choice)\n"
        "        ctx.write_event_to_stream(ev)\n"
        "        return StopEvent()\n"
    )
    (call,) = scan_source(source, "app.py")
    assert (call.api, call.confidence, call.recommendation.mode, call.recommendation.rules) == ("achat_with_tools", "low", "sampled", ("R10",))


def test_a_microsoft_agent_framework_workflow_built_in_helpers_and_its_event_loop() -> None:
    source = MAF_TOOLS.replace("{mode}", "never_require") + (
        "from agent_framework.orchestrations import HandoffBuilder\n"
        "def create_agents(client):\n"
        "    triage = Agent(client=client, name='triage')\n"
        "    billing = Agent(client=client, name='billing', tools=[refund])\n"
        "    return triage, billing\n"
        "def build_workflow(client):\n"
        "    triage, billing = create_agents(client)\n"
        "    return HandoffBuilder(participants=[triage, billing]).with_start_agent(triage).build()\n"
        "async def main():\n"
        "    workflow = build_workflow(OpenAIChatClient())\n"
        "    async for event in workflow.run('refund ch_1', stream=True):\n"
        "        if event.type in ('intermediate', 'output'):\n"
        "            print(event.data.author_name if event.data.author_name else 'agent')\n"
        "        elif event.type == 'status' and event.state is WorkflowRunState.IDLE:\n"
        "            break\n"
    )
    (call,) = scan_source(source, "app.py")
    assert (call.recommendation.mode, call.recommendation.rules) == ("required", ("R2",))
    assert [t.name for t in call.risky_tools] == ["refund"]
