"""Discovery on small sources: resolution, identity of calls, guards and gates."""

from __future__ import annotations

import libcst as cst
import pytest

from escalated.contracts.scan.discovery import scan_source


def one(source: str):
    calls = scan_source(source, "agent.py")
    assert len(calls) == 1, calls
    return calls[0]


def test_client_defined_below_its_use_is_resolved() -> None:
    call = one(
        "import anthropic\n"
        "def ask(q):\n"
        "    return claude.messages.create(model='m', max_tokens=1, messages=[])\n"
        "claude = anthropic.AsyncAnthropic()\n"
    )
    assert (call.provider, call.api, call.confidence) == ("anthropic", "messages.create", "high")


def test_client_set_in_init_resolves_in_other_methods() -> None:
    call = one(
        "from openai import AzureOpenAI\n"
        "class Bot:\n"
        "    def __init__(self):\n"
        "        self.llm_client = AzureOpenAI(api_version='x')\n"
        "    def reply(self, text):\n"
        "        return self.llm_client.chat.completions.create(model='m', messages=[])\n"
    )
    assert (call.function, call.provider, call.confidence) == ("Bot.reply", "openai", "high")


def test_parameter_annotation_resolves_the_client() -> None:
    call = one("from openai import AsyncOpenAI\nasync def f(c: AsyncOpenAI | None):\n    return await c.responses.create(model='m', input='x')\n")
    assert (call.api, call.is_async, call.confidence) == ("responses.create", True, "high")


def test_aliased_function_import() -> None:
    call = one("from litellm import acompletion as chat\nasync def f():\n    return await chat(model='m', messages=[])\n")
    assert (call.provider, call.api) == ("litellm", "acompletion")


def test_langchain_model_through_bind_tools_variable() -> None:
    call = one(
        "from langchain_groq import ChatGroq\n"
        "def f(tools):\n"
        "    llm = ChatGroq(model='m')\n"
        "    llm_with_tools = llm.bind_tools(tools)\n"
        "    return llm_with_tools.invoke('hi')\n"
    )
    assert (call.provider, call.api, call.confidence) == ("langchain", "invoke", "high")
    assert call.recommendation.rules == ("R7",)  # a parameter is a tool list nobody can see


def test_unresolved_receiver_with_the_sdk_shape_is_reported_with_lower_confidence() -> None:
    call = one("def f(client):\n    return client.chat.completions.create(model='m', messages=[])\n")
    assert (call.provider, call.confidence) == ("openai", "medium")


def test_twilio_messages_create_is_not_an_llm_call() -> None:
    assert scan_source("def f(client):\n    client.messages.create(to='+1', from_='+2', body='hi')\n", "a.py") == ()


def test_calls_are_numbered_per_function_in_source_order() -> None:
    calls = scan_source(
        "import openai\n"
        "def f():\n"
        "    a = openai.chat.completions.create(model='m', messages=[])\n"
        "    b = openai.chat.completions.create(model='m', messages=[])\n"
        "def g():\n"
        "    return openai.responses.create(model='m', input='x')\n",
        "a.py",
    )
    assert [(c.function, c.index) for c in calls] == [("f", 0), ("f", 1), ("g", 0)]


def test_location_spans_the_whole_call_and_source_is_exact() -> None:
    source = "import openai\nx = openai.responses.create(\n    model='m', input='x'\n)\n"
    call = one(source)
    loc = call.location
    assert (loc.line, loc.column, loc.end_line, loc.end_column) == (2, 4, 4, 1)
    assert call.source == "openai.responses.create(\n    model='m', input='x'\n)"


@pytest.mark.parametrize(
    ("wrapped", "is_async"),
    [
        ("r = guard('support.reply', lambda: client.chat.completions.create(model='m', messages=[]))", False),
        ("r = await guard('support.reply', lambda: client.chat.completions.create(model='m', messages=[]))", True),
    ],
)
def test_a_guarded_call_keeps_its_identity(wrapped: str, is_async: bool) -> None:
    prefix = "from escalated.guard import guard\nfrom openai import AsyncOpenAI\nclient = AsyncOpenAI()\nasync def reply():\n"
    plain = one(prefix + "    r = " + ("await " if is_async else "") + "client.chat.completions.create(model='m', messages=[])\n")
    guarded = one(prefix + "    " + wrapped + "\n")
    assert (guarded.function, guarded.index, guarded.api) == (plain.function, plain.index, plain.api)
    assert (guarded.guarded, guarded.guard_id, guarded.is_async) == (True, "support.reply", is_async)
    assert (plain.guarded, plain.guard_id) == (False, None)


def test_langgraph_interrupt_is_an_existing_gate() -> None:
    call = one(
        "from langgraph.types import interrupt\nfrom langchain_openai import ChatOpenAI\n"
        "def node(state):\n    out = ChatOpenAI().invoke(state)\n    return interrupt(out)\n"
    )
    assert call.existing_gate == "langgraph.interrupt"


def test_agent_built_with_interrupt_before_is_gated() -> None:
    call = one(
        "from langgraph.prebuilt import create_react_agent\n"
        "agent = create_react_agent('openai:gpt-4o', [], interrupt_before=['tools'])\n"
        "def run(q):\n    return agent.invoke({'messages': q})\n"
    )
    assert call.existing_gate == "langgraph.interrupt"


def test_a_syntax_error_raises() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        scan_source("import openai\ndef f(:\n", "bad.py")


def test_same_source_gives_the_same_result() -> None:
    source = (CORPUS_FILE := __import__("pathlib").Path(__file__).parent / "corpus" / "rules" / "r02_money.py").read_text()
    assert scan_source(source, CORPUS_FILE.name) == scan_source(source, CORPUS_FILE.name)


def test_wrapped_clients_and_helpers_resolve() -> None:
    calls = scan_source(
        "import instructor\nfrom openai import OpenAI\n"
        "def get_client():\n    return OpenAI()\n"
        "patched = instructor.from_openai(OpenAI())\n"
        "def a():\n    return get_client().chat.completions.with_raw_response.create(model='m', messages=[])\n"
        "def b():\n    return patched.chat.completions.create(model='m', response_model=int, messages=[])\n",
        "a.py",
    )
    assert [(c.function, c.api, c.confidence) for c in calls] == [
        ("a", "chat.completions.create", "high"),
        ("b", "chat.completions.create", "high"),
    ]


def test_legacy_langchain_chains_are_model_calls() -> None:
    call = one(
        "from langchain.chains import RetrievalQA\nfrom langchain_openai import ChatOpenAI\n"
        "def ask(q, retriever):\n"
        "    qa = RetrievalQA.from_chain_type(llm=ChatOpenAI(), retriever=retriever)\n"
        "    return qa.run(q)\n"
    )
    assert (call.provider, call.api) == ("langchain", "run")


def test_openai_agents_runner_reads_the_agents_tools() -> None:
    call = one(
        "from agents import Agent, Runner, function_tool, CodeInterpreterTool\n"
        "from agents.mcp import MCPServerStdio\n"
        "@function_tool\ndef send_invoice(customer: str) -> str:\n    return customer\n"
        "server = MCPServerStdio(params={'command': 'x'})\n"
        "agent = Agent(name='a', tools=[send_invoice, CodeInterpreterTool(tool_config={})], mcp_servers=[server])\n"
        "def go(q):\n    return Runner.run_sync(agent, q)\n"
    )
    assert (call.provider, call.api) == ("openai", "agents.Runner.run_sync")
    assert call.recommendation.rules == ("R1", "R2", "R7")


def test_langchain_wrappers_around_a_model_are_model_calls() -> None:
    call = one(
        "from langchain_core.runnables.history import RunnableWithMessageHistory\n"
        "from langchain_openai import ChatOpenAI\n"
        "chat = RunnableWithMessageHistory(ChatOpenAI(), lambda sid: None)\n"
        "def answer(q):\n    return chat.invoke({'input': q})\n"
    )
    assert (call.api, call.confidence) == ("invoke", "medium")


def test_pydantic_ai_and_llama_index_calls() -> None:
    calls = scan_source(
        "from pydantic_ai import Agent\n"
        "from llama_index.llms.openai import OpenAI\n"
        "agent = Agent('anthropic:claude-sonnet-4-5')\n"
        "@agent.tool_plain\ndef delete_account(user_id: str) -> str:\n    return user_id\n"
        "def go(q):\n    return agent.run_sync(q).output\n"
        "def ask(q):\n    return OpenAI(model='gpt-4o').complete(q).text\n",
        "a.py",
    )
    assert [(c.function, c.provider, c.api, c.recommendation.rules) for c in calls] == [
        ("go", "anthropic", "run_sync", ("R3",)),
        ("ask", "openai", "complete", ("R11",)),
    ]


def test_an_agents_provider_is_its_llm_by_name_or_built_inline() -> None:
    # Resolver._provider_of once also asked `inner is not node`, a Kind against the Call: never
    # false, so dropping it changed nothing; this holds the branch it guarded.
    calls = scan_source(
        "from llama_index.core.agent import ReActAgent\n"
        "from llama_index.llms.anthropic import Anthropic\n"
        "llm = Anthropic(model='claude-sonnet-4-5')\n"
        "agent = ReActAgent(tools=[], llm=llm)\n"
        "inline = ReActAgent(tools=[], llm=Anthropic(model='claude-sonnet-4-5'))\n"
        "def go(q):\n    return agent.chat(q).response\n"
        "def go_inline(q):\n    return inline.chat(q).response\n",
        "a.py",
    )
    assert [(c.function, c.provider) for c in calls] == [("go", "anthropic"), ("go_inline", "anthropic")]


def test_crewai_kickoff_reads_every_agents_tools() -> None:
    call = one(
        "from crewai import Agent, Crew, Task\nfrom crewai.tools import tool\n"
        "@tool('Refund a charge')\ndef refund_charge(charge_id: str) -> str:\n    return charge_id\n"
        "clerk = Agent(role='clerk', goal='g', backstory='b', tools=[refund_charge])\n"
        "crew = Crew(agents=[clerk], tasks=[Task(description='d', expected_output='e', agent=clerk)])\n"
        "def run():\n    return crew.kickoff()\n"
    )
    assert (call.provider, call.api, call.recommendation.rules) == ("litellm", "kickoff", ("R2",))


def test_smolagents_code_agent_executes_code() -> None:
    call = one(
        "from smolagents import CodeAgent, LiteLLMModel\n"
        "agent = CodeAgent(tools=[], model=LiteLLMModel(model_id='anthropic/claude-sonnet-4-5'))\n"
        "def solve(task):\n    return agent.run(task)\n"
    )
    assert (call.provider, call.api, call.recommendation.rules) == ("litellm", "run", ("R1",))


def test_structured_output_of_an_unknown_model_is_still_a_model() -> None:
    call = one(
        "from schemas import Decision\n"
        "def route(llm, query):\n"
        "    structured = llm.with_structured_output(Decision)\n"
        "    decision = structured.invoke(query)\n"
        "    return decision\n"
    )
    assert (call.provider, call.api, call.confidence) == ("langchain", "invoke", "low")


def test_langgraph_function_calling_executor_is_an_agent() -> None:
    call = one(
        "from langchain_openai import ChatOpenAI\nfrom langgraph.prebuilt import chat_agent_executor\n"
        "def send_sms(to: str, text: str) -> str:\n    return to\n"
        "app = chat_agent_executor.create_function_calling_executor(ChatOpenAI(), [send_sms])\n"
        "def go(q):\n    return app.invoke({'messages': [q]})\n"
    )
    assert (call.api, call.recommendation.rules) == ("invoke", ("R5",))


def test_a_parameter_holds_what_its_call_sites_pass() -> None:
    calls = scan_source(
        "from langchain_openai import ChatOpenAI\n"
        "class Provider:\n"
        "    def __init__(self, llm, verbose=False):\n        self.llm = llm\n"
        "    @classmethod\n    def create(cls):\n        return cls(ChatOpenAI())\n"
        "    async def ask(self, messages):\n        return await self.llm.ainvoke(messages)\n"
        "def run(writer, q):\n    return writer.invoke(q)\n"
        "def main():\n    run(ChatOpenAI(), 'hi')\n",
        "a.py",
    )
    assert [(c.function, c.api, c.confidence) for c in calls] == [
        ("Provider.ask", "ainvoke", "medium"),
        ("run", "invoke", "medium"),
        ("main", "run", "medium"),  # run() returns the model's output: its call site is a call too
    ]


def test_a_wrapper_named_like_the_sdk_is_used_like_the_sdk() -> None:
    call = one("from .llm import litellm\ndef send(**kwargs):\n    return litellm.completion(**kwargs)\n")
    assert (call.provider, call.api, call.confidence) == ("litellm", "completion", "medium")


def test_model_calls_run_on_a_thread_are_reported() -> None:
    call = one(
        "import asyncio\nfrom google import genai\nclient = genai.Client()\n"
        "async def draw(p):\n    return await asyncio.to_thread(client.models.generate_content, model='m', contents=p)\n"
    )
    assert (call.provider, call.api, call.confidence, call.is_async) == ("google-genai", "models.generate_content", "medium", True)


def test_invalid_escape_sequences_in_literals_are_harmless() -> None:
    # Under filterwarnings=error, evaluating "\d" raises: every literal read must be quiet.
    source = (
        "import re\nfrom langchain_core.tools import tool\nfrom langchain_openai import ChatOpenAI\n"
        "@tool('ids \\d')\ndef find_ids(text: str) -> str:\n    '''Find \\d ids.'''\n    return ','.join(re.findall('\\d+', text))\n"
        "SCHEMA = [{'type': 'function', 'function': {'name': 'x\\d', 'description': '\\w'}}]\n"
        "def go(q):\n    return ChatOpenAI().bind_tools([find_ids, *SCHEMA]).invoke(q)\n"
    )
    call = one(source)
    assert call.recommendation.rules == ("R9",)


def test_a_client_copied_with_options_is_still_the_client() -> None:
    calls = scan_source(
        "from openai import OpenAI\nclient = OpenAI()\n"
        "def f():\n"
        "    client.with_options(timeout=5).chat.completions.create(model='m', messages=[{'role': 'user', 'content': 'hi'}])\n"
        "    slow = client.with_options(max_retries=5)\n"
        "    return slow.beta.threads.runs.create_and_poll(thread_id='t', assistant_id='a')\n",
        "a.py",
    )
    assert [(c.api, c.confidence) for c in calls] == [("chat.completions.create", "high"), ("beta.threads.runs.create_and_poll", "high")]


def test_a_model_function_run_on_a_thread_is_reported() -> None:
    call = one(
        "import asyncio\nfrom litellm import completion\n"
        "async def ask(q):\n    return await asyncio.to_thread(completion, model='m', messages=[q])\n"
    )
    assert (call.provider, call.api, call.confidence, call.is_async) == ("litellm", "completion", "medium", True)


def test_a_same_module_wrapper_called_on_an_attribute_is_a_call_decided_where_it_is_called() -> None:
    calls = scan_source(
        "import subprocess\nfrom openai import OpenAI\n"
        "class LLM:\n    def __init__(self):\n        self.client = OpenAI()\n"
        "    def completion(self, messages):\n"
        "        return self.client.chat.completions.create(model='m', messages=messages).choices[0].message.content\n"
        "class Agent:\n    def __init__(self):\n        self.llm = LLM()\n"
        "    def step(self, task):\n        subprocess.run(self.llm.completion([task]), shell=True)\n",
        "a.py",
    )
    assert [(c.function, c.api, c.confidence, c.recommendation.mode) for c in calls] == [
        ("LLM.completion", "chat.completions.create", "high", "required"),  # not "autonomous": its callers decide
        ("Agent.step", "LLM.completion", "medium", "required"),
    ]


def test_a_helper_returning_what_it_built_from_answers_is_not_a_wrapper() -> None:
    calls = scan_source(
        "from openai import OpenAI\nclient = OpenAI()\n"
        "def many(topics):\n    answers = []\n    for t in topics:\n"
        "        answers.append(client.responses.create(model='m', input=t).output_text)\n    return answers\n"
        "def shorten(text):\n    return text[:10]\n"
        "def main():\n    print(many(['a']))\n    print(shorten(client.responses.create(model='m', input='b').output_text))\n",
        "a.py",
    )
    assert [(c.function, c.api) for c in calls] == [("many", "responses.create"), ("main", "responses.create")]
