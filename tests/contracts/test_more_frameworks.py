"""Shapes of the held-out repositories the scan had never seen: Google ADK packages and deployed apps,
AutoGen model clients, agents and teams, LangGraph nodes whose tools come from a table in another
module, tools whose bodies are stand-ins, and a LangGraph store written with the output."""

from __future__ import annotations

from pathlib import Path

from escalated.contracts.scan.discovery import scan_source, scan_tree

ADK_TOOLS = '''
def send_receipt(customer_id: str) -> dict:
    """Sends an email with the order's receipt to the customer."""
    return {"status": "sent", "to": customer_id}

def lookup_order(order_id: str) -> dict:
    """Looks up an order."""
    return {"id": order_id}
'''


def _adk_package(root: Path) -> None:
    (root / "shop").mkdir()
    (root / "shop" / "__init__.py").write_text("from . import agent\n")
    (root / "shop" / "tools.py").write_text(ADK_TOOLS)
    (root / "shop" / "agent.py").write_text(
        "from google.adk.agents import Agent\nfrom google.adk.tools.agent_tool import AgentTool\n"
        "from .tools import send_receipt, lookup_order\n"
        "orders = Agent(model='gemini-2.0-flash', name='orders', tools=[lookup_order])\n"
        "mailer = Agent(model='gemini-2.0-flash', name='mailer', tools=[send_receipt])\n"
        "root_agent = Agent(model='gemini-2.0-flash', name='root', tools=[AgentTool(agent=orders)], sub_agents=[mailer])\n"
    )


def test_an_adk_root_agent_is_the_run_the_adk_serves(tmp_path: Path) -> None:
    _adk_package(tmp_path)
    (call,) = scan_tree(tmp_path).calls
    assert (call.location.path, call.api, call.function) == ("shop/agent.py", "root_agent", "<module>")
    # Its sub-agent's stand-in tool says it sends mail; the agent it calls as a tool only computes.
    assert call.recommendation.mode == "required" and call.recommendation.rules == ("R5",)
    assert "described as \"Sends an email" in call.recommendation.reasons[0]
    assert call.runner and [t.name for t in call.risky_tools] == ["send_receipt"]


def test_an_adk_root_agent_whose_risky_tools_ask_for_confirmation_is_gated() -> None:
    source = ADK_TOOLS + (
        "from google.adk.agents import Agent\nfrom google.adk.tools import FunctionTool\n"
        "root_agent = Agent(model='m', name='root', tools=[FunctionTool(send_receipt, require_confirmation=True), lookup_order])\n"
    )
    (call,) = scan_source(source, "shop/agent.py")
    assert call.recommendation.mode == "required" and call.existing_gate == "tool-approval"


def test_other_adk_agents_are_not_calls(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from google.adk.agents import Agent\nhelper = Agent(model='m', name='h')\n")
    assert scan_tree(tmp_path).calls == ()


def test_a_deployed_adk_app_runs_its_agent_of_another_module(tmp_path: Path) -> None:
    _adk_package(tmp_path)
    (tmp_path / "deploy.py").write_text(
        "from vertexai import agent_engines\nfrom vertexai.preview.reasoning_engines import AdkApp\n"
        "from shop.agent import root_agent\n"
        "app = AdkApp(agent=root_agent)\nremote = agent_engines.create(app)\n"
        "for event in remote.stream_query(user_id='u', message='hello'):\n"
        "    if event.get('content', None):\n        print(event)\n"
    )
    calls = {c.location.path: c for c in scan_tree(tmp_path).calls}
    deployed = calls["deploy.py"]
    assert deployed.api == "stream_query" and deployed.recommendation.mode == "required"
    assert deployed.recommendation.rules == ("R5", "R7")  # R7: its tools' gates are checked in shop/agent.py
    assert deployed.unseen_tools


def test_an_adk_runner_runs_its_agent() -> None:
    source = ADK_TOOLS + (
        "from google.adk.agents import LlmAgent\nfrom google.adk.runners import InMemoryRunner\n"
        "clerk = LlmAgent(model='gemini-2.0-flash', name='clerk', tools=[send_receipt])\n"
        "runner = InMemoryRunner(agent=clerk)\n"
        "async def go(session, message):\n"
        "    async for event in runner.run_async(user_id='u', session_id=session, new_message=message):\n        print(event)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.api == "run_async" and call.recommendation.mode == "required" and call.runner


def test_an_autogen_model_client_from_a_parameter_annotation_is_a_model() -> None:
    source = (
        "from autogen_core.models import ChatCompletionClient, SystemMessage\n"
        "class Worker:\n"
        "    def __init__(self, model_client: ChatCompletionClient) -> None:\n        self._client = model_client\n"
        "    async def handle(self, messages):\n"
        "        result = await self._client.create(messages=messages)\n        return result.content\n"
    )
    (call,) = scan_source(source, "a.py")
    assert (call.api, call.confidence) == ("create", "high")


def test_autogen_agents_and_teams_are_runs_of_their_tools() -> None:
    source = (
        "import subprocess\n"
        "from autogen_agentchat.agents import AssistantAgent\nfrom autogen_agentchat.teams import RoundRobinGroupChat\n"
        "from autogen_ext.models.openai import OpenAIChatCompletionClient\n"
        "def run_shell(cmd: str) -> str:\n    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout\n"
        "client = OpenAIChatCompletionClient(model='gpt-4o')\n"
        "ops = AssistantAgent('ops', model_client=client, tools=[run_shell])\n"
        "chat = AssistantAgent('chat', model_client=client)\n"
        "team = RoundRobinGroupChat([chat, ops])\n"
        "async def answer(task):\n    return (await chat.run(task=task)).messages[-1].content\n"
        "async def fix(task):\n"
        "    async for message in team.run_stream(task=task):\n"
        "        if isinstance(message, str):\n            continue\n        print(message)\n"
    )
    answer, fix = scan_source(source, "a.py")
    assert (answer.api, answer.recommendation.mode) == ("run", "autonomous")
    # The team runs ops's shell tool; which kind of event arrived chooses nothing.
    assert (fix.api, fix.recommendation.mode, fix.recommendation.rules) == ("run_stream", "required", ("R1",))


def test_tools_from_a_table_in_another_module(tmp_path: Path) -> None:
    (tmp_path / "kit").mkdir()
    (tmp_path / "kit" / "__init__.py").write_text("from kit.base import get_tools\n")
    (tmp_path / "kit" / "mail.py").write_text(
        "from langchain_core.tools import tool\n@tool\ndef write_email(to: str, body: str) -> str:\n"
        '    """Write and send an email."""\n    return f"Email sent to {to}"\n'
        "@tool\ndef check_calendar(day: str) -> str:\n"
        '    """Check calendar availability for a given day."""\n    return f"Free on {day}"\n'
    )
    (tmp_path / "kit" / "base.py").write_text(
        "def get_tools(names=None):\n"
        "    from kit.mail import write_email, check_calendar\n"
        "    table = {'write_email': write_email, 'check_calendar': check_calendar}\n"
        "    if names is None:\n        return list(table.values())\n"
        "    return [table[n] for n in names if n in table]\n"
    )
    (tmp_path / "graph.py").write_text(
        "from langchain.chat_models import init_chat_model\nfrom kit import get_tools\n"
        "llm = init_chat_model('openai:gpt-4.1').bind_tools(get_tools(['check_calendar', 'write_email']))\n"
        "def llm_call(state):\n    return {'messages': [llm.invoke(state['messages'])]}\n"
    )
    (call,) = scan_tree(tmp_path).calls
    assert call.recommendation.mode == "required" and call.recommendation.rules == ("R5",)
    assert "described as 'Write and send an email.'" in call.recommendation.reasons[0]


def test_a_stand_in_is_judged_by_its_description_but_a_real_body_by_what_it_does() -> None:
    source = (
        "import requests\nfrom langchain_core.tools import tool\nfrom langchain_openai import ChatOpenAI\n"
        '@tool\ndef notify_team(text: str) -> str:\n    """Send a Slack message to the team."""\n'
        "    requests.get('https://example.com/status')\n    return 'ok'\n"
        '@tool\ndef cart_total(cart_id: str) -> str:\n    """Refund policy: explains when a refund is possible."""\n'
        "    return 'refunds within 30 days'\n"
        "llm = ChatOpenAI().bind_tools([notify_team])\nother = ChatOpenAI().bind_tools([cart_total])\n"
        "def a(m):\n    return llm.invoke(m)\n"
        "def b(m):\n    return other.invoke(m)\n"
    )
    real, stand_in = scan_source(source, "a.py")
    # notify_team's body is real code (it reads a page): its description is not what decides.
    assert real.recommendation.mode == "reviewed" and all(f.basis != "declared" for f in real.findings)
    # A stand-in whose name does not agree with its prose ("Refund policy: explains ...") is what it does: nothing.
    assert (stand_in.recommendation.mode, stand_in.recommendation.rules) == ("autonomous", ("R11",))


def test_the_output_written_to_a_langgraph_store_is_a_write() -> None:
    source = (
        "from langchain.chat_models import init_chat_model\n"
        "def update_memory(store, namespace, messages):\n"
        "    llm = init_chat_model('openai:gpt-4.1')\n"
        "    result = llm.invoke(messages)\n"
        "    store.put(namespace, 'profile', result.content)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert (call.recommendation.mode, call.recommendation.rules) == ("reviewed", ("R6",))


def test_a_callback_returning_the_output_is_followed_where_it_is_called(tmp_path: Path) -> None:
    (tmp_path / "mailer.py").write_text(
        "import smtplib\nclass Mailer:\n    def __init__(self, host):\n        self.host = host\n"
        "    def _connect(self):\n        smtp = smtplib.SMTP(self.host)\n        return smtp\n"
        "    def process(self, respond):\n        smtp = self._connect()\n        for thread in ['a']:\n"
        "            reply = respond(thread)\n            if reply is None:\n                continue\n"
        "            smtp.send_message(reply)\n"
        "    def run(self, respond):\n        self.process(respond)\n"
    )
    (tmp_path / "app.py").write_text(
        "from openai import OpenAI\nfrom mailer import Mailer\nclient = OpenAI()\nmailer = Mailer('smtp.example.com')\n"
        "def respond(thread):\n"
        "    out = client.chat.completions.create(model='gpt-4o', messages=[{'role': 'user', 'content': thread}])\n"
        "    return {'body': out.choices[0].message.content}\n"
        "def main():\n    mailer.run(respond)\n"
    )
    (call,) = scan_tree(tmp_path).calls
    assert (call.recommendation.mode, call.recommendation.rules) == ("required", ("R5",))
    assert "mailer.run(respond) -> smtp.send_message() (in mailer.py)" in call.recommendation.reasons[0]


def test_an_agent_of_another_module_whose_risky_tools_are_guarded_there_is_seen(tmp_path: Path) -> None:
    _adk_package(tmp_path)
    tools = (tmp_path / "shop" / "tools.py").read_text()
    (tmp_path / "shop" / "tools.py").write_text(
        "from escalated.guard import guard_tool\n" + tools.replace("def send_receipt", "@guard_tool('shop.root')\ndef send_receipt")
    )
    (tmp_path / "deploy.py").write_text(
        "from vertexai.preview.reasoning_engines import AdkApp\nfrom shop.agent import root_agent\n"
        "app = AdkApp(agent=root_agent)\nfor event in app.stream_query(user_id='u', message='hello'):\n    print(event)\n"
    )
    calls = {c.location.path: c for c in scan_tree(tmp_path).calls}
    assert calls["deploy.py"].recommendation.rules == ("R5",) and not calls["deploy.py"].unseen_tools
    root = calls["shop/agent.py"]
    assert [(t.name, t.guard_id) for t in root.risky_tools] == [("send_receipt", "shop.root")] and not root.unguarded_tools


def test_an_autogen_team_with_a_code_executor_runs_model_written_code() -> None:
    source = (
        "from autogen_agentchat.agents import AssistantAgent, CodeExecutorAgent\n"
        "from autogen_agentchat.teams import RoundRobinGroupChat\n"
        "from autogen_ext.code_executors.local import LocalCommandLineCodeExecutor\n"
        "from autogen_ext.models.openai import OpenAIChatCompletionClient\n"
        "coder = AssistantAgent('coder', model_client=OpenAIChatCompletionClient(model='gpt-4o'))\n"
        "runner = CodeExecutorAgent('runner', code_executor=LocalCommandLineCodeExecutor(work_dir='out'))\n"
        "team = RoundRobinGroupChat([coder, runner])\n"
        "async def go(task):\n    return await team.run(task=task)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert (call.recommendation.mode, call.recommendation.rules) == ("required", ("R1",))
