"""Shapes of model calls the recall 4 round's held-out repositories showed the scan missing, each a small project.

Written from what real agent code does (a service kept under an annotated attribute and picked by a
dependency injector, streamed pieces collected into a message record, a private record class around a
stream, a retry method of the class running the call it is handed); the repositories themselves stay
out of this repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

SERVICE_BASE = """\
import abc


class CompletionService(abc.ABC):
    @abc.abstractmethod
    def chat_completion(self, messages):
        raise NotImplementedError
"""

OPENAI_SERVICE = """\
from openai import OpenAI

from app.llm.base import CompletionService


class OpenAIService(CompletionService):
    def __init__(self):
        self.client = OpenAI()

    def chat_completion(self, messages):
        res = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        yield {"role": "assistant", "content": res.choices[0].message.content}
"""

INJECTED_SERVICE = {
    "app/__init__.py": "",
    "app/llm/base.py": SERVICE_BASE,
    "app/llm/openai.py": OPENAI_SERVICE,
    "app/llm/__init__.py": """\
from injector import Injector, inject

from app.llm.base import CompletionService
from app.llm.openai import OpenAIService


class LLMApi:
    @inject
    def __init__(self, injector: Injector):
        self.injector = injector
        self._set_completion_service(OpenAIService)

    def _set_completion_service(self, svc):
        self.completion_service: CompletionService = self.injector.get(svc)

    def chat_completion_stream(self, messages):
        return self.completion_service.chat_completion(messages)
""",
}


def test_an_attribute_annotated_with_an_interface_holds_what_the_annotation_says(tmp_path: Path) -> None:
    # TaskWeaver: LLMApi keeps the provider service the injector builds under an annotated attribute
    # (self.completion_service: CompletionService = self.injector.get(svc)); CompletionService is an
    # abc.ABC whose subclasses (OpenAIService, ...) ask the model. What the injector returns is not
    # known; the annotation says what the attribute holds, so its chat_completion is a model call.
    calls = scan_calls(tmp_path, INJECTED_SERVICE)
    assert calls[("app/llm/__init__.py", 17)][0] == "CompletionService.chat_completion"


COLLECTED_INTO_A_RECORD = {
    "app/__init__.py": "",
    "app/llm/base.py": SERVICE_BASE,
    "app/llm/openai.py": OPENAI_SERVICE,
    "app/llm/util.py": """\
def format_chat_message(role, message):
    return {"role": role, "content": message}
""",
    "app/llm/__init__.py": """\
from app.llm.base import CompletionService
from app.llm.util import format_chat_message


class LLMApi:
    def __init__(self, service: CompletionService):
        self.service = service

    def chat_completion(self, messages):
        msg = format_chat_message("assistant", "")
        for chunk in self.service.chat_completion(messages):
            msg["role"] = chunk["role"]
            msg["content"] += chunk["content"]
        return msg

    def chat_record(self, messages):
        record = {"role": "assistant", "content": ""}
        for chunk in self.service.chat_completion(messages):
            record["content"] += chunk["content"]
        return record

    def weekly_report(self, messages):
        report = {"title": "Weekly", "summary": "Summary: "}
        for chunk in self.service.chat_completion(messages):
            report["summary"] += chunk["content"]
        return report
""",
    "app/planner.py": """\
import subprocess

from app.llm import LLMApi


class Planner:
    def __init__(self, llm_api: LLMApi):
        self.llm_api = llm_api

    def reply(self, messages):
        answer = self.llm_api.chat_completion(messages)
        subprocess.run(answer["content"], shell=True)

    def record(self, messages):
        subprocess.run(self.llm_api.chat_record(messages)["content"], shell=True)

    def report(self, messages):
        print(self.llm_api.weekly_report(messages))
""",
}


def test_pieces_collected_under_a_key_started_empty_make_the_dict_a_record_of_the_answer(tmp_path: Path) -> None:
    # TaskWeaver's LLMApi.chat_completion starts msg = format_chat_message("assistant", "") and adds each
    # streamed piece with msg["content"] += chunk["content"]: msg is the answer's record, so the method is a
    # wrapper and the planner's call site a model call. A report whose summary starts with text of its own
    # ("Summary: ") is built from the answer, not a record of it: its call site is no model call.
    calls = scan_calls(tmp_path, COLLECTED_INTO_A_RECORD)
    assert calls[("app/planner.py", 11)][:2] == ("LLMApi.chat_completion", "required")
    assert calls[("app/planner.py", 15)][:2] == ("LLMApi.chat_record", "required")
    assert ("app/planner.py", 18) not in calls


PRIVATE_RECORD = """\
import subprocess

from openai import OpenAI

client = OpenAI()


class _StreamWithMetadata:
    def __init__(self, gen, model):
        self.gen = gen
        self.model = model

    def __iter__(self):
        return iter(self.gen)


def _chunks(messages, model):
    for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
        yield chunk.choices[0].delta.content or ""


def _stream(messages, model):
    gen = _chunks(messages, model)
    return _StreamWithMetadata(gen, model)


def reply(messages, model):
    stream = _stream(messages, model)
    subprocess.run("".join(stream), shell=True)
"""


def test_a_private_record_class_around_the_stream_holds_the_answer(tmp_path: Path) -> None:
    # gptme: _stream wraps the provider's generator in _StreamWithMetadata(gen, model), a class of the
    # module whose name starts with an underscore; it holds the stream as Message(...) holds a text, so
    # _stream is a wrapper and reply's call site a model call.
    calls = scan_calls(tmp_path, {"chat.py": PRIVATE_RECORD})
    assert calls[("chat.py", 28)][:2] == ("_stream", "required")


RETRY_METHOD = """\
import subprocess

from openai import OpenAI


class Executor:
    def __init__(self):
        self.client = OpenAI()

    def _execute_with_retry(self, attempts, func):
        if attempts <= 1:
            return func()
        for _ in range(attempts - 1):
            try:
                return func()
            except TimeoutError:
                continue
        return func()

    def _invoke(self, messages):
        def _call_provider():
            return self.client.chat.completions.create(model="gpt-4o", messages=messages)

        response = self._execute_with_retry(3, _call_provider)
        return response.choices[0].message.content

    def run(self, messages):
        subprocess.run(self._invoke(messages), shell=True)
"""


def test_a_method_returning_the_callback_it_is_handed_returns_that_wrappers_answer(tmp_path: Path) -> None:
    # ChatDev: AgentNodeExecutor._invoke_provider hands its nested _call_provider (provider.call_model)
    # to self._execute_with_retry, a method of the class that returns func() (or tenacity's retries of it):
    # the retry method's call site is where the answer comes back, and _invoke_provider's callers use it.
    calls = scan_calls(tmp_path, {"executor.py": RETRY_METHOD})
    assert calls[("executor.py", 24)][0] == "Executor._invoke._call_provider"
    assert calls[("executor.py", 28)][:2] == ("Executor._invoke", "required")


RECORD_FROM_FIELDS = {
    "app/__init__.py": "",
    "app/schemas.py": """\
class ChatCompletionResponse:
    def __init__(self, **fields):
        self.__dict__.update(fields)
""",
    "app/llm.py": """\
import subprocess

from openai import OpenAI

from app.schemas import ChatCompletionResponse


def chat_completions_request(data):
    chat_completion = OpenAI().chat.completions.create(**data)
    response = ChatCompletionResponse(**chat_completion.model_dump())
    return response


def run(data):
    subprocess.run(chat_completions_request(data).choices[0].message.content, shell=True)
""",
}


def test_a_record_built_from_the_answers_own_fields_is_the_answer(tmp_path: Path) -> None:
    # letta: openai_chat_completions_request returns ChatCompletionResponse(**chat_completion.model_dump()),
    # its own pydantic model filled with the SDK response's fields; whoever gets it gets the answer.
    calls = scan_calls(tmp_path, RECORD_FROM_FIELDS)
    assert calls[("app/llm.py", 15)][:2] == ("chat_completions_request", "required")


RAW_STREAM = """\
import subprocess

import httpx

CODEX_ENDPOINT = "https://chatgpt.com/backend-api/codex/responses"


async def request(config, request_data):
    endpoint = config.model_endpoint or CODEX_ENDPOINT
    async with httpx.AsyncClient() as client:
        async with client.stream("POST", endpoint, json=request_data, timeout=120.0) as response:
            async for line in response.aiter_lines():
                subprocess.run(line, shell=True)


async def stream(config, request_data):
    endpoint = config.model_endpoint or CODEX_ENDPOINT

    async def generator():
        async with httpx.AsyncClient() as client:
            async with client.stream("POST", endpoint, json=request_data) as response:
                async for line in response.aiter_lines():
                    yield line

    return generator()


async def models(config):
    async with httpx.AsyncClient() as client:
        async with client.stream("GET", CODEX_ENDPOINT) as response:
            return await response.aread()
"""


def test_a_streamed_post_to_a_model_address_is_a_model_call(tmp_path: Path) -> None:
    # letta's ChatGPT OAuth client: httpx's client.stream("POST", endpoint, json=...) to the Codex backend's
    # /responses, the address configured or else a constant of the module (endpoint = config.model_endpoint
    # or CHATGPT_CODEX_ENDPOINT), also from a generator nested in the function binding it. A GET asks nothing.
    calls = scan_calls(tmp_path, {"chatgpt.py": RAW_STREAM})
    assert calls[("chatgpt.py", 11)][:2] == ("http.post", "required")
    assert calls[("chatgpt.py", 21)][0] == "http.post"
    assert ("chatgpt.py", 30) not in calls


BATCH = """\
import subprocess

from anthropic import AsyncAnthropic

client = AsyncAnthropic()


async def submit(requests):
    return await client.messages.batches.create(requests=requests)


async def beta_submit(requests):
    return await client.beta.messages.batches.create(requests=requests)
"""


def test_a_message_batch_submitted_is_a_model_call(tmp_path: Path) -> None:
    # letta's batch agent sends every agent's step as one Anthropic Message Batch (messages.batches.create)
    # and runs the answers' tool calls when the batch is read back.
    calls = scan_calls(tmp_path, {"batch.py": BATCH})
    assert calls[("batch.py", 9)][0] == "messages.batches.create"
    assert calls[("batch.py", 13)][0] == "beta.messages.batches.create"


ABSTRACT_BASE = {
    "app/__init__.py": "",
    "app/llm/__init__.py": "",
    "app/llm/base.py": """\
from abc import abstractmethod


class LLMClientBase:
    def __init__(self, config):
        self.config = config

    async def request_async_with_telemetry(self, request_data):
        return await self.request_async(request_data)

    @abstractmethod
    async def request_async(self, request_data):
        raise NotImplementedError

    @abstractmethod
    async def stream_async(self, request_data):
        raise NotImplementedError
""",
    "app/llm/openai_client.py": """\
from openai import AsyncOpenAI

from app.llm.base import LLMClientBase


class OpenAIClient(LLMClientBase):
    async def request_async(self, request_data):
        response = await AsyncOpenAI().chat.completions.create(**request_data)
        return response.model_dump()

    async def stream_async(self, request_data):
        return await AsyncOpenAI().chat.completions.create(**request_data, stream=True)
""",
    "app/llm/anthropic_client.py": """\
from anthropic import AsyncAnthropic

from app.llm.base import LLMClientBase


class AnthropicClient(LLMClientBase):
    async def request_async(self, request_data):
        response = await AsyncAnthropic().messages.create(**request_data)
        return response.model_dump()

    async def stream_async(self, request_data):
        return await AsyncAnthropic().messages.create(**request_data, stream=True)
""",
    "app/agent.py": """\
import subprocess

from app.llm.base import LLMClientBase


class Agent:
    async def step(self, llm_client: LLMClientBase, request_data):
        stream = await llm_client.stream_async(request_data)
        async for chunk in stream:
            subprocess.run(chunk.choices[0].delta.content, shell=True)
""",
}


def test_a_base_method_its_subclasses_in_other_modules_implement_with_the_model_is_a_call_on_the_base(tmp_path: Path) -> None:
    # letta: LLMClientBase.stream_async is abstract; every client deriving from it (another module each)
    # implements it with its SDK. The agent's llm_client: LLMClientBase runs one of them, so its
    # stream_async(...) is a model call, as request_async_with_telemetry (the base's own wrapper) already is.
    calls = scan_calls(tmp_path, ABSTRACT_BASE)
    assert calls[("app/agent.py", 8)][:2] == ("LLMClientBase.stream_async", "required")


LISTED_TO_JOIN = """\
import subprocess

from openai import OpenAI

client = OpenAI()


def stream(messages):
    for chunk in client.chat.completions.create(model="gpt-4o", messages=messages, stream=True):
        yield chunk.choices[0].delta.content or ""


def chat(messages):
    content_parts = list(stream(messages))
    return "".join(content_parts)


def chat_at_once(messages):
    return "".join(list(stream(messages)))


def count(messages):
    parts = list(stream(messages))
    return len(parts)


def run(messages):
    subprocess.run(chat(messages), shell=True)
    subprocess.run(chat_at_once(messages), shell=True)
    subprocess.run(str(count(messages)), shell=True)
"""


def test_a_stream_listed_only_to_be_joined_is_the_answers_text(tmp_path: Path) -> None:
    # gptme's subscription provider: chat() collects stream()'s pieces with list(...) and returns
    # "".join(content_parts): the answer's text, so chat is a wrapper. A count of the pieces is not.
    calls = scan_calls(tmp_path, {"sub.py": LISTED_TO_JOIN})
    assert calls[("sub.py", 28)][:2] == ("chat", "required")
    assert calls[("sub.py", 29)][:2] == ("chat_at_once", "required")
    assert ("sub.py", 30) not in calls


INJECTED_BY_NAME = {
    "packs/__init__.py": "",
    "packs/ai_functions.py": """\
from litellm import completion

from functionz.framework import func


@func.register_function(metadata={"description": "GPT call"}, imports=["litellm"])
def gpt_call(prompt):
    response = completion(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return response["choices"][0]["message"]["content"]
""",
    "packs/code_writing.py": """\
import json

from functionz.framework import func


@func.register_function(metadata={"description": "Writes a function"}, dependencies=["gpt_call", "add_new_function"])
def generate_function_code(description):
    response = gpt_call(f"Write a Python function: {description}")
    function_data = json.loads(response)
    add_new_function(name=function_data["name"], code=function_data["code"])
    exec(function_data["code"])


@func.register_function(metadata={"description": "Counts words"})
def count_words(text):
    def gpt_call(prompt):
        return prompt.split()

    return len(gpt_call(text))
""",
}


def test_a_wrapper_called_by_a_name_the_module_never_binds_is_the_projects_one_of_that_name(tmp_path: Path) -> None:
    # BabyAGI's functionz runs each registered function with its dependencies put into its globals by name:
    # generate_function_code calls gpt_call(...) without defining or importing it. The name can only be the
    # one the loader injects; the project's one wrapper function of that name is it. A function of the same
    # name defined where it is called is that function.
    calls = scan_calls(tmp_path, INJECTED_BY_NAME)
    assert calls[("packs/code_writing.py", 8)][:2] == ("gpt_call", "required")
    assert ("packs/code_writing.py", 19) not in calls


REGISTRY_BY_NAME = {
    "functionz/__init__.py": "",
    "functionz/framework.py": """\
class Functionz:
    def __init__(self):
        self.functions = {}

    def register_function(self, **metadata):
        def decorate(f):
            self.functions[f.__name__] = f
            return f

        return decorate

    def __getattr__(self, name):
        if name in self.functions:
            return self.functions[name]
        raise AttributeError(name)


func = Functionz()
""",
    "packs/__init__.py": "",
    "packs/ai_functions.py": """\
import subprocess

from litellm import completion

from functionz.framework import func


@func.register_function(imports=["litellm"])
def gpt_call(prompt):
    response = completion(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return response["choices"][0]["message"]["content"]


@func.register_function(dependencies=["gpt_call"])
def run_command(task):
    subprocess.run(func.gpt_call(f"A shell command for: {task}"), shell=True)
""",
    "packs/other.py": """\
import subprocess

from functionz.framework import func


def ask_and_run(task):
    subprocess.run(func.gpt_call(task), shell=True)
    func.register_function(imports=[])
""",
}


def test_a_wrapper_asked_for_by_name_from_a_registry_looking_attributes_up_by_name(tmp_path: Path) -> None:
    # BabyAGI's func (a Functionz instance) finds a registered function by name in __getattr__:
    # func.gpt_call(prompt) runs the project's gpt_call, in its own module or another.
    calls = scan_calls(tmp_path, REGISTRY_BY_NAME)
    assert calls[("packs/ai_functions.py", 16)][:2] == ("gpt_call", "required")
    assert calls[("packs/other.py", 7)][:2] == ("gpt_call", "required")
    assert ("packs/other.py", 8) not in calls
