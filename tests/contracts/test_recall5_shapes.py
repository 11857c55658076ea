"""Shapes of model calls the recall 5 round found the scan missing in held-out repositories, each a small project.

Written from what real agent code does (UFO's provider services returning the answer alone in a list beside
its cost, a service class calling its same-module base class's request method through ``super()``); the
repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

ANSWER_IN_A_LIST = {
    "app/__init__.py": "",
    "app/llm/__init__.py": "",
    "app/llm/openai_service.py": """\
from openai import OpenAI


class OpenAIService:
    def __init__(self):
        self.client = OpenAI()

    def chat_completion(self, messages):
        response = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        cost = response.usage.total_tokens * 0.00001
        return [response.choices[0].message.content], cost

    def first(self, messages):
        response = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        return [response.choices[0].message.content]

    def with_prompt(self, messages):
        response = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        return [messages[-1], response.choices[0].message.content]
""",
    "app/agent.py": """\
import subprocess

from app.llm.openai_service import OpenAIService


def step(messages):
    responses, cost = OpenAIService().chat_completion(messages)
    subprocess.run(responses[0], shell=True)


def again(messages):
    subprocess.run(OpenAIService().first(messages)[0], shell=True)


def shown(messages):
    print(OpenAIService().with_prompt(messages))
""",
}


def test_the_answer_alone_in_a_returned_list_is_the_answer(tmp_path: Path) -> None:
    # UFO's BaseOpenAIService._chat_completion (and each provider service) returns
    # [response.choices[0].message.content], cost; its callers take responses[0]. The list holds the answer
    # alone: the method is a wrapper, its call sites model calls (here run as a shell command). A list of the
    # prompt and the answer is built from the answer, not the answer: its call site is no model call.
    calls = scan_calls(tmp_path, ANSWER_IN_A_LIST)
    assert calls[("app/agent.py", 7)][:2] == ("OpenAIService.chat_completion", "required")
    assert calls[("app/agent.py", 12)][:2] == ("OpenAIService.first", "required")
    assert ("app/agent.py", 16) not in calls


SUPER_IN_THE_MODULE = {
    "app/__init__.py": "",
    "app/llm.py": """\
from openai import OpenAI


class BaseService:
    def __init__(self):
        self.client = OpenAI()

    def _chat_completion(self, messages):
        response = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        return response.choices[0].message.content


class OpenAIService(BaseService):
    def chat_completion(self, messages):
        return super()._chat_completion(messages)


class LoggedService(BaseService):
    def chat_completion(self, messages):
        return self._chat_completion(messages)
""",
    "app/agent.py": """\
import subprocess

from app.llm import LoggedService, OpenAIService


def step(messages):
    subprocess.run(OpenAIService().chat_completion(messages), shell=True)


def logged(messages):
    subprocess.run(LoggedService().chat_completion(messages), shell=True)
""",
}


def test_a_base_class_wrapper_of_the_same_module_called_through_super_or_self(tmp_path: Path) -> None:
    # UFO's OpenAIService.chat_completion returns super()._chat_completion(...), the request method of
    # BaseOpenAIService in the same module: a call site of that wrapper, so chat_completion is one too and
    # the agent's call of it a model call. self._chat_completion(...) inherited from that base likewise.
    calls = scan_calls(tmp_path, SUPER_IN_THE_MODULE)
    assert calls[("app/llm.py", 15)][0] == "BaseService._chat_completion"
    assert calls[("app/llm.py", 20)][0] == "BaseService._chat_completion"
    assert calls[("app/agent.py", 7)][:2] == ("OpenAIService.chat_completion", "required")


POSTED_TO_A_JOINED_ADDRESS = {
    "app/__init__.py": "",
    "app/llava.py": """\
import subprocess

import requests


class LlavaService:
    def __init__(self, config):
        self.config_llm = config

    def chat_completion(self, messages):
        payload = {"model": self.config_llm["API_MODEL"], "prompt": messages[-1]["content"]}
        response = requests.post(self.config_llm["API_BASE"] + "/chat/completions", json=payload)
        return response.json()["text"]

    def health(self):
        return requests.post(self.config_llm["API_BASE"] + "/health", json={})


def step(service, messages):
    subprocess.run(LlavaService(service).chat_completion(messages), shell=True)
""",
}


def test_a_post_to_a_base_address_joined_with_a_model_path_by_plus(tmp_path: Path) -> None:
    # UFO's LLaVA and CogAgent services post to self.config_llm["API_BASE"] + "/chat/completions", a body
    # without "messages": the address joined with + is read as an f-string's would be (the base not spelled
    # in the code, the path an OpenAI-compatible chat completion). A health check's path is no model's.
    calls = scan_calls(tmp_path, POSTED_TO_A_JOINED_ADDRESS)
    assert calls[("app/llava.py", 12)][0] == "http.post"
    assert ("app/llava.py", 16) not in calls
    assert calls[("app/llava.py", 20)][:2] == ("LlavaService.chat_completion", "required")


SERVICE_FROM_A_FACTORY = {
    "app/__init__.py": "",
    "app/llm/__init__.py": "",
    "app/llm/base.py": """\
import abc
from importlib import import_module


class BaseService(abc.ABC):
    @abc.abstractmethod
    def chat_completion(self, messages):
        pass

    @staticmethod
    def get_service(name: str) -> "BaseService":
        module = import_module("." + name, package="app.llm")
        return getattr(module, name.title() + "Service")()
""",
    "app/llm/openai.py": """\
from openai import OpenAI

from app.llm.base import BaseService


class OpenaiService(BaseService):
    def __init__(self):
        self.client = OpenAI()

    def chat_completion(self, messages):
        response = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        return response.choices[0].message.content
""",
    "app/llm/call.py": """\
from app.llm.base import BaseService


def get_completion(messages, api_type):
    service = BaseService.get_service(api_type)
    return service.chat_completion(messages)
""",
    "app/agent.py": """\
import subprocess

from app.llm.call import get_completion


def step(messages):
    subprocess.run(get_completion(messages, "openai"), shell=True)
""",
}


def test_a_factory_annotated_to_return_an_interface_hands_out_an_instance_of_it(tmp_path: Path) -> None:
    # UFO's get_completions: service = BaseService.get_service(api_type, ...), a static method annotated
    # -> "BaseService" that imports the provider's module by name and builds its class; BaseService is an
    # ABC whose subclasses' chat_completion ask the model. The annotation says what the name holds, so
    # service.chat_completion(...) is a model call (whichever subclass), and get_completion a wrapper.
    calls = scan_calls(tmp_path, SERVICE_FROM_A_FACTORY)
    assert calls[("app/llm/call.py", 6)][0] == "BaseService.chat_completion"
    assert calls[("app/agent.py", 7)][:2] == ("get_completion", "required")


LANGCHAIN_APREDICT_MESSAGES = {
    "app/__init__.py": "",
    "app/service.py": """\
import subprocess

from langchain.chat_models import ChatOpenAI
from langchain.schema import HumanMessage


class AgentService:
    def __init__(self, model: ChatOpenAI):
        self.model = model

    async def analyze(self, task):
        message = await self.model.apredict_messages([HumanMessage(content=task)])
        subprocess.run(message.content, shell=True)
""",
}


def test_langchains_apredict_messages_asks_the_model(tmp_path: Path) -> None:
    # AgentGPT's analyze_task_agent asks its ChatOpenAI with apredict_messages, the async twin of
    # predict_messages (LangChain's legacy chat-model API), which the vocabulary lacked.
    calls = scan_calls(tmp_path, LANGCHAIN_APREDICT_MESSAGES)
    assert calls[("app/service.py", 12)][:2] == ("apredict_messages", "required")


HANDED_TO_A_RUNNER = {
    "app/__init__.py": "",
    "app/helpers.py": """\
from langchain import LLMChain
from langchain.chat_models.base import BaseChatModel
from openai.error import RateLimitError


class ModelError(Exception):
    pass


async def openai_error_handler(func, *args, **kwargs):
    try:
        return await func(*args, **kwargs)
    except RateLimitError as e:
        raise ModelError("rate limited") from e


async def call_model_with_handling(model: BaseChatModel, prompt, args):
    chain = LLMChain(llm=model, prompt=prompt)
    return await openai_error_handler(chain.arun, args)
""",
    "app/service.py": """\
import subprocess

from langchain.chat_models import ChatOpenAI

from app.helpers import call_model_with_handling, openai_error_handler


class AgentService:
    def __init__(self, model: ChatOpenAI):
        self.model = model

    async def next_command(self, prompt):
        command = await call_model_with_handling(self.model, prompt, {"goal": "x"})
        subprocess.run(command, shell=True)

    async def analyze(self, messages):
        message = await openai_error_handler(func=self.model.invoke, input=messages)
        subprocess.run(message.content, shell=True)

    async def counted(self, text):
        return await openai_error_handler(len, text)
""",
}


def test_a_runner_handed_a_models_own_method_asks_the_model(tmp_path: Path) -> None:
    # AgentGPT: openai_error_handler(func, *args, **kwargs) returns await func(*args, **kwargs) in a try that
    # maps OpenAI's errors; it is handed LLMChain(...).arun (in its module) and the model's own method (by
    # keyword, from another module). The runner's call asks the model, as asyncio.to_thread(fn, ...) does;
    # handed len, it asks nothing.
    calls = scan_calls(tmp_path, HANDED_TO_A_RUNNER)
    assert calls[("app/helpers.py", 19)][0] == "arun"
    assert calls[("app/service.py", 13)][:2] == ("call_model_with_handling", "required")
    assert calls[("app/service.py", 17)][:2] == ("invoke", "required")
    assert ("app/service.py", 21) not in calls


STREAMED_FROM_A_CHAIN = {
    "app/__init__.py": "",
    "app/tools.py": """\
from langchain import LLMChain
from langchain.chat_models.base import BaseChatModel
from lanarky.responses import StreamingResponse


def summarize(model: BaseChatModel, prompt, text):
    chain = LLMChain(llm=model, prompt=prompt)
    return StreamingResponse.from_chain(chain, {"text": text}, media_type="text/event-stream")


def echo(text):
    return StreamingResponse.from_chain(text, {"text": text})
""",
}


def test_lanarkys_streaming_response_from_a_chain_runs_it(tmp_path: Path) -> None:
    # AgentGPT's tools answer with lanarky's StreamingResponse.from_chain(chain, inputs): the FastAPI response
    # runs the LangChain chain and streams its answer to the browser. Given no chain, it asks nothing.
    calls = scan_calls(tmp_path, STREAMED_FROM_A_CHAIN)
    assert calls[("app/tools.py", 8)][0] == "StreamingResponse.from_chain"
    assert ("app/tools.py", 12) not in calls


SDK_SUBCLASS_ELSEWHERE = {
    "app/__init__.py": "",
    "app/model_factory.py": """\
from langchain.chat_models import ChatOpenAI


class WrappedChatOpenAI(ChatOpenAI):
    max_tokens: int
""",
    "app/helpers.py": HANDED_TO_A_RUNNER["app/helpers.py"],
    "app/service.py": """\
import subprocess

from langchain.schema import HumanMessage

from app.helpers import openai_error_handler
from app.model_factory import WrappedChatOpenAI


class AgentService:
    def __init__(self, model: WrappedChatOpenAI):
        self.model = model

    async def analyze(self, task):
        message = await openai_error_handler(func=self.model.apredict_messages, messages=[HumanMessage(content=task)])
        subprocess.run(message.content, shell=True)


def built(task):
    model = WrappedChatOpenAI(max_tokens=100)
    return model.predict_messages([HumanMessage(content=task)])
""",
}


def test_a_class_deriving_from_an_sdk_class_in_another_module_is_the_sdks_object(tmp_path: Path) -> None:
    # AgentGPT's model_factory defines WrappedChatOpenAI(ChatOpenAI); the agent service, another module, is
    # given one (model: WrappedChatOpenAI) and hands self.model's method to its error handler. Annotated
    # or built elsewhere, the class is the SDK's chat model, as it already was in its own module.
    calls = scan_calls(tmp_path, SDK_SUBCLASS_ELSEWHERE)
    assert calls[("app/service.py", 14)][:2] == ("apredict_messages", "required")
    assert calls[("app/service.py", 20)][0] == "predict_messages"


MOCKED_COMPLETION = {
    "app/__init__.py": "",
    "app/adapter.py": """\
import subprocess

from litellm import completion


def wrapped(text, messages):
    return completion(model="azure_ml/fara", mock_response=text, messages=messages)


def asked(messages):
    subprocess.run(completion(model="gpt-4o", messages=messages).choices[0].message.content, shell=True)
""",
}


def test_a_litellm_completion_given_its_mock_response_asks_no_model(tmp_path: Path) -> None:
    # cua's Azure ML adapter posts to the endpoint itself, then returns
    # completion(model=…, mock_response=answer, messages=…): litellm hands back the text it is given, sending
    # nothing (its documented testing switch). No model call; the real completion beside it still is one.
    calls = scan_calls(tmp_path, MOCKED_COMPLETION)
    assert ("app/adapter.py", 7) not in calls
    assert calls[("app/adapter.py", 11)][:2] == ("completion", "required")


SDK_SUBCLASS_WITH_METHODS = {
    "app/__init__.py": "",
    "app/zhipu_api.py": """\
from zhipuai import ZhipuAI


class ZhiPuModelAPI(ZhipuAI):
    async def acreate(self, **kwargs):
        resp = self.chat.completions.create(**kwargs)
        return resp.choices[0].message.content
""",
    "app/provider.py": """\
import subprocess

from zhipuai import ZhipuAI

from app.zhipu_api import ZhiPuModelAPI


class ZhiPuAILLM:
    def __init__(self):
        self.llm = ZhiPuModelAPI(api_key="k")

    async def run(self, messages):
        subprocess.run(await self.llm.acreate(messages=messages), shell=True)
""",
}


def test_an_sdk_subclass_with_methods_of_its_own_stays_a_project_class_elsewhere(tmp_path: Path) -> None:
    # MetaGPT's ZhiPuModelAPI(ZhipuAI) defines acreate, a wrapper of its own: in another module,
    # self.llm.acreate(...) on one is a call of that wrapper, not an unknown method of the SDK's client.
    calls = scan_calls(tmp_path, SDK_SUBCLASS_WITH_METHODS)
    assert calls[("app/provider.py", 13)][:2] == ("ZhiPuModelAPI.acreate", "required")
