"""Held out recall 3: model clients handed out rather than called where they are made.

Written from what real coding agents do (a client class per provider chosen by a
static method annotated ``-> type[Base]``, called as an instance through ``__call__``;
an agent base class whose ``get_llm()`` hands out a closure around it; mixins calling
it on whatever agent they are mixed into; one name bound to two SDKs' clients; a
message list whose last element is returned); the repositories themselves stay out of
this repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes


CLIENTS = {
    "core/__init__.py": "",
    "core/llm/__init__.py": "",
    "core/llm/base.py": """\
class BaseLLMClient:
    def __init__(self, config):
        self.config = config

    async def _make_request(self, convo):
        raise NotImplementedError()

    async def __call__(self, convo, parser=None):
        response = await self._make_request(convo)
        if parser:
            response = parser(response)
        return response, len(convo)

    async def api_check(self):
        resp, _n = await self(["Reply START"])
        return bool(resp)

    @staticmethod
    def for_provider(provider) -> type["BaseLLMClient"]:
        from .openai_client import OpenAIClient
        from .anthropic_client import AnthropicClient

        return OpenAIClient if provider == "openai" else AnthropicClient
""",
    "core/llm/openai_client.py": """\
from openai import AsyncOpenAI

from .base import BaseLLMClient


class OpenAIClient(BaseLLMClient):
    async def _make_request(self, convo):
        client = AsyncOpenAI()
        response = await client.chat.completions.create(model="gpt-4o", messages=convo)
        return response.choices[0].message.content
""",
    "core/llm/anthropic_client.py": """\
from anthropic import AsyncAnthropic

from .base import BaseLLMClient


class AnthropicClient(BaseLLMClient):
    async def _make_request(self, convo):
        client = AsyncAnthropic()
        response = await client.messages.create(model="claude-sonnet-4-0", max_tokens=1024, messages=convo)
        return response.content[0].text
""",
}

RUNNER = {
    "core/runner.py": """\
import subprocess

from core.llm.base import BaseLLMClient


async def run_step(config, convo):
    client_class = BaseLLMClient.for_provider(config.provider)
    llm_client = client_class(config)
    command, _n = await llm_client(convo)
    subprocess.run(command, shell=True)
""",
}


def test_an_instance_called_runs_its_class_s_call_a_wrapper_of_the_model(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, CLIENTS)
    # self(...) in a method of the class runs BaseLLMClient.__call__, which returns _make_request's answer.
    assert calls[("core/llm/base.py", 15)][0] == "BaseLLMClient.__call__"


def test_a_class_handed_out_by_a_method_annotated_type_of_it_builds_an_instance_whose_call_asks_the_model(
    tmp_path: Path,
) -> None:
    calls = scan_modes(tmp_path, {**CLIENTS, **RUNNER})
    # for_provider(...) -> type["BaseLLMClient"]: client_class(config) is a BaseLLMClient, calling it runs __call__.
    assert calls[("core/runner.py", 9)] == ("BaseLLMClient.__call__", "required")


AGENTS = {
    "core/agents/__init__.py": "",
    "core/agents/base.py": """\
from core.llm.base import BaseLLMClient


class BaseAgent:
    def __init__(self, config):
        self.config = config

    def get_llm(self, name=None):
        client_class = BaseLLMClient.for_provider(self.config.provider)
        llm_client = client_class(self.config)

        async def client(convo, **kwargs):
            response, _n = await llm_client(convo, **kwargs)
            return response

        return client
""",
    "core/agents/executor.py": """\
import subprocess

from core.agents.base import BaseAgent


class Executor(BaseAgent):
    async def run(self, task):
        llm = self.get_llm()
        command = await llm([task])
        subprocess.run(command, shell=True)
""",
    "core/agents/mixins.py": """\
import json


class ChatWithBreakdownMixin:
    async def chat_with_breakdown(self, convo):
        llm = self.get_llm("breakdown")
        breakdown = await llm(json.dumps(convo))
        return breakdown
""",
    "core/agents/developer.py": """\
from core.agents.base import BaseAgent
from core.agents.mixins import ChatWithBreakdownMixin


class Developer(ChatWithBreakdownMixin, BaseAgent):
    async def plan(self, convo):
        steps = await self.chat_with_breakdown(convo)
        print(steps)
""",
}


def test_what_a_base_class_s_method_hands_out_asks_the_model_when_a_subclass_calls_it(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {**CLIENTS, **AGENTS})
    # get_llm returns its nested client, which returns llm_client's answer: llm(...) is a model call.
    assert calls[("core/agents/base.py", 13)][0] == "BaseLLMClient.__call__"
    assert calls[("core/agents/executor.py", 9)] == ("BaseAgent.get_llm()", "required")


def test_a_mixin_calls_what_the_agents_it_is_mixed_into_hand_out(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {**CLIENTS, **AGENTS})
    # ChatWithBreakdownMixin has no base and no get_llm: the agents' one (BaseAgent.get_llm()), and
    # chat_with_breakdown, returning its answer, is a wrapper the developer calls.
    assert calls[("core/agents/mixins.py", 7)][0] == "BaseAgent.get_llm()"
    assert calls[("core/agents/developer.py", 7)][0] == "ChatWithBreakdownMixin.chat_with_breakdown"


FACTORY = {
    "app.py": """\
import subprocess

from openai import OpenAI


def make_llm(model):
    client = OpenAI()

    def ask(prompt):
        response = client.chat.completions.create(model=model, messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content

    return ask


def fix(task):
    llm = make_llm("gpt-4o")
    subprocess.run(llm(task), shell=True)
""",
}


def test_a_function_handing_out_its_nested_wrapper_is_asked_where_its_result_is_called(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, FACTORY)
    assert calls[("app.py", 18)] == ("make_llm()", "required")


TWO_SDKS = {
    "chat.py": """\
import os

from anthropic import Anthropic
from openai import OpenAI


def complete(messages, use_openai=False):
    if use_openai:
        client = OpenAI()
    else:
        client = Anthropic(api_key=os.environ["ANTHROPIC_API_KEY"])
    if use_openai:
        response = client.chat.completions.create(model="gpt-4o", messages=messages)
        return response.choices[0].message.content
    response = client.messages.create(model="claude-sonnet-4-0", max_tokens=1024, messages=messages)
    return response.content[0].text
""",
}


def test_a_name_bound_to_two_sdks_clients_in_branches_asks_each_by_its_own_api(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, TWO_SDKS)
    assert calls[("chat.py", 13)][0] == "chat.completions.create"
    # The first binding is OpenAI's, which has no messages.create: Anthropic's, the other binding, has.
    assert calls[("chat.py", 15)][0] == "messages.create"


MESSAGES = {
    "chat.py": """\
from openai import OpenAI

client = OpenAI()


class Message:
    def __init__(self, role, content):
        self.role = role
        self.content = content


class ChatGPT:
    def __init__(self):
        self.messages = []

    def chat(self, content):
        self.messages.append(Message("user", content))
        reply = client.chat.completions.create(model="gpt-4o", messages=[vars(m) for m in self.messages])
        self.messages.append(Message("assistant", reply.choices[0].message.content))
        return self.messages[-1].content
""",
    "cleanup.py": """\
import subprocess

from chat import ChatGPT


class Fixer(ChatGPT):
    def fix(self, issue):
        command = self.chat(issue)
        subprocess.run(command, shell=True)
""",
}


def test_the_last_message_of_a_list_the_answer_was_appended_to_is_the_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, MESSAGES)
    # chat returns self.messages[-1].content, the record of the answer it appended: a wrapper.
    assert calls[("cleanup.py", 8)] == ("ChatGPT.chat", "required")


FUNCTION_CALLS = {
    "agent.py": """\
import re
import subprocess

from openai import OpenAI

client = OpenAI()


def parse_function_calls(text):
    return [{"tool": m.group(1), "arguments": {"query": m.group(2)}} for m in re.finditer(r"<(\\\\w+)>(.*?)</", text)]


def validate_and_parse_function_call(text):
    calls = parse_function_calls(text)
    return calls[0] if calls else None


def get_function_call(prompt):
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    function_call = validate_and_parse_function_call(response.choices[0].message.content)
    return function_call


def search(question):
    call = get_function_call(question)
    subprocess.run("rg " + call["arguments"]["query"], shell=True)
""",
}


def test_function_calls_parsed_out_of_the_answer_are_the_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, FUNCTION_CALLS)
    # validate_and_parse_function_call(answer) hands back the function call the model wrote.
    assert calls[("agent.py", 25)] == ("get_function_call", "required")


RETRY = {
    "bot/__init__.py": "",
    "bot/retry.py": """\
import logging


async def retry_with_fallback_models(f, models=("gpt-4o", "gpt-4o-mini")):
    for model in models:
        try:
            return await f(model)
        except Exception:
            logging.warning("model %s failed", model)
    raise RuntimeError("no model answered")
""",
    "bot/questions.py": """\
from openai import AsyncOpenAI

from bot.retry import retry_with_fallback_models


class LineQuestions:
    def __init__(self, git_provider):
        self.client = AsyncOpenAI()
        self.git_provider = git_provider

    async def run(self, question):
        self.question = question
        answer = await retry_with_fallback_models(self._get_prediction)
        self.git_provider.publish_comment(answer)

    async def _get_prediction(self, model):
        response = await self.client.chat.completions.create(model=model, messages=[{"role": "user", "content": self.question}])
        return response.choices[0].message.content
""",
}


def test_a_function_returning_what_its_callback_returns_hands_back_a_wrapper_s_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, RETRY)
    # retry_with_fallback_models returns await f(model): handed _get_prediction, it returns the answer.
    assert calls[("bot/questions.py", 13)][0] == "LineQuestions._get_prediction"


SPICE = {
    "assistant/llm.py": """\
from spice import Spice


class LlmApiHandler:
    def __init__(self):
        self.spice = Spice()

    async def call_llm_api(self, messages, model, stream):
        if stream:
            return await self.spice.stream_response(model=model, messages=messages)
        return await self.spice.get_response(model=model, messages=messages)

    async def embed(self, texts, model):
        return await self.spice.get_embeddings(texts, model)
""",
}


def test_spice_a_published_client_library_asks_models_through_get_and_stream_response(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, SPICE)
    assert calls[("assistant/llm.py", 10)][0] == "stream_response"
    assert calls[("assistant/llm.py", 11)][0] == "get_response"
    # Embeddings are not a model's answer.
    assert ("assistant/llm.py", 14) not in calls


PARSED_RESPONSE = {
    "coder/conversation.py": """\
from openai import AsyncOpenAI


class Conversation:
    def __init__(self, parser):
        self.client = AsyncOpenAI()
        self.parser = parser

    async def get_model_response(self, messages):
        stream = await self.client.chat.completions.create(model="gpt-4o", messages=messages, stream=True)
        edits = await self.parser.stream_and_parse_llm_response(stream)
        return edits
""",
    "coder/session.py": """\
from coder.conversation import Conversation


async def step(parser, messages, project):
    conversation = Conversation(parser)
    edits = await conversation.get_model_response(messages)
    project.write_changes_to_files(edits)
""",
}


def test_the_answer_parsed_by_a_parser_of_the_response_is_the_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, PARSED_RESPONSE)
    # stream_and_parse_llm_response(stream) hands back the edits the model wrote: get_model_response is a wrapper.
    assert calls[("coder/session.py", 6)][0] == "Conversation.get_model_response"


RUNNER_MODULE = {
    "chatbot.py": """\
from agents.agent import Agent
from agents.run import Runner

from wallet import send_funds

agent = Agent(name="wallet", instructions="Move funds when asked.", tools=[send_funds])


async def run_chat_mode(agent):
    while True:
        output = await Runner.run(agent, input("Prompt: "))
        print(output.final_output)
""",
    "wallet.py": """\
import stripe
from agents import function_tool


@function_tool
def send_funds(amount: int, to: str) -> str:
    stripe.Transfer.create(amount=amount, currency="usd", destination=to)
    return "sent"
""",
}


def test_the_agents_sdk_runner_imported_from_its_defining_module_runs_the_agent(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, RUNNER_MODULE)
    assert calls[("chatbot.py", 11)][0] == "agents.Runner.run"
