"""Shapes of model calls the recall 6 round found the scan missing in held-out repositories, each a small project.

Written from what real agent code does (XAgent's request function loaded by provider name with
``importlib.import_module`` and ``getattr``, kept in a dict and returned from it; a module-level instance of
the generator class imported by every agent; a function manager object called like a function; a generate
method returning the answer beside its token counts); the repositories themselves stay out of this
repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

LOADED_BY_NAME = {
    "app/__init__.py": "",
    "app/agent/__init__.py": "",
    "app/request/__init__.py": "from .obj_generator import objgenerator, OBJGenerator\n",
    "app/request/openai.py": """\
import openai


def chatcompletion_request(**kwargs):
    response = openai.ChatCompletion.create(**kwargs)
    return response
""",
    "app/request/local.py": """\
import requests


def chatcompletion_request(**kwargs):
    response = requests.post(
        "http://127.0.0.1:8000/chat/completions",
        json={"model": kwargs["model"], "messages": kwargs["messages"]},
    ).json()
    return response
""",
    "app/request/obj_generator.py": """\
import importlib


class OBJGenerator:
    def __init__(self):
        self.chatcompletion_request_funcs = {}

    def chatcompletion(self, **kwargs):
        request_type = kwargs.pop("request_type", "openai")
        response = self._get_chatcompletion_request_func(request_type)(**kwargs)
        return response

    def _get_chatcompletion_request_func(self, request_type: str):
        if request_type not in self.chatcompletion_request_funcs:
            module = importlib.import_module(f".{request_type}", "app.request")
            self.chatcompletion_request_funcs[request_type] = getattr(module, "chatcompletion_request")
        return self.chatcompletion_request_funcs[request_type]

    def settings(self, name):
        module = importlib.import_module(f".{name}", "app.request")
        return getattr(module, "SETTINGS")


objgenerator = OBJGenerator()
""",
    "app/functions.py": """\
from app.request import objgenerator


class FunctionManager:
    def __call__(self, function_name, **kwargs):
        response = objgenerator.chatcompletion(messages=[{"role": "user", "content": function_name}])
        return response["choices"][0]["message"]["content"]


function_manager = FunctionManager()
""",
    "app/agent/tool_agent.py": """\
import subprocess

from app.request import objgenerator


class ToolAgent:
    def generate(self, messages):
        response = objgenerator.chatcompletion(messages=messages, request_type="openai")
        tokens = response["usage"]
        return response["choices"][0]["message"]["content"], tokens

    def step(self, messages):
        command, tokens = self.generate(messages)
        subprocess.run(command, shell=True)

    def prompt(self, messages):
        answer, tokens = self.generate(messages)
        notes = [{"role": "user", "content": "NOTES\\n" + answer}]
        return notes, tokens
""",
    "app/planner.py": """\
from app.agent.tool_agent import ToolAgent


def plan(messages):
    notes, tokens = ToolAgent().prompt(messages)
    return notes
""",
    "app/summary.py": """\
from app.functions import function_manager


def summarize(text):
    return function_manager("summarize", text=text)
""",
}


def test_a_request_function_loaded_by_name_and_what_hands_it_out(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, LOADED_BY_NAME)
    # getattr(importlib.import_module(f".{request_type}", "app.request"), "chatcompletion_request"), kept in a
    # dict and returned from it: every module of the package defining that name defines a wrapper, so calling
    # what the method hands out asks the model, and chatcompletion returning it is a wrapper in turn.
    assert calls[("app/request/obj_generator.py", 10)] == ("OBJGenerator._get_chatcompletion_request_func()", "required")
    # objgenerator = OBJGenerator() at the top of its module, imported through the package: a call site.
    assert calls[("app/agent/tool_agent.py", 8)] == ("OBJGenerator.chatcompletion", "required")
    # function_manager = FunctionManager() called like a function: its __call__ returns the answer.
    assert calls[("app/summary.py", 5)][0] == "FunctionManager.__call__"
    # getattr of a name no wrapper has (a module's SETTINGS) hands out nothing that asks.
    assert not any(line == 20 for path, line in calls if path == "app/request/obj_generator.py")


def test_the_token_counts_unpacked_beside_the_answer_are_not_the_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, LOADED_BY_NAME)
    assert calls[("app/agent/tool_agent.py", 13)] == ("ToolAgent.generate", "required")
    # prompt returns notes built around the answer and the token counts: no wrapper, so nothing calls it as one.
    assert ("app/agent/tool_agent.py", 17) in calls  # its own call of generate is a call site
    assert not any(api == "ToolAgent.prompt" for api, _mode in calls.values())
    assert ("app/planner.py", 5) not in calls


HTTP_HELPERS = {
    "ollama_service.py": """\
from contextlib import contextmanager


class OllamaService:
    def __init__(self, config):
        self.config = config

    def _chat_completion(self, messages, stream=True):
        api_endpoint = "/api/chat"
        payload = {"model": self.config.model, "messages": messages, "stream": stream}
        with self._request_api(api_endpoint, payload) as resp:
            response = resp.json()["message"]["content"]
        yield {"role": "assistant", "content": response}

    def _completion(self, prompt):
        payload = {"model": self.config.model, "prompt": prompt, "stream": False}
        with self._request_api("/api/generate", payload) as resp:
            return resp.json()["response"]

    def _get_embedding(self, string):
        payload = {"model": self.config.embedding_model, "prompt": string}
        with self._request_api("/api/embeddings", payload) as resp:
            return resp.json()["embedding"]

    def get_embeddings(self, strings):
        return [self._get_embedding(s) for s in strings]

    @contextmanager
    def _request_api(self, api_path, payload, stream=False):
        import requests

        url = f"{self.config.api_base}{api_path}"
        with requests.Session() as session:
            with session.post(url, json=payload, stream=stream) as resp:
                yield resp
""",
    "provider.py": """\
import asyncio
from functools import partial

import requests


def _run_sync(func, *args, **kwargs):
    loop = asyncio.get_event_loop()
    return loop.run_in_executor(None, partial(func, *args, **kwargs))


class Provider:
    async def inference(self, prompt):
        payload = {"model": "local", "messages": [{"role": "user", "content": prompt}]}
        api_url = self.API_URI.rstrip("/") + "/chat/completions"
        resp = await _run_sync(requests.post, api_url, json=payload, timeout=300)
        return resp.json()["choices"][0]["message"]["content"]

    async def download(self, url):
        resp = await _run_sync(requests.get, url, timeout=30)
        return resp.content

    async def azure(self, prompt):
        api_url = f"{self.base}/openai/deployments/{self.AI_MODEL}/chat/completions?api-version=2024-02-01"
        resp = requests.post(api_url, json={"messages": [{"role": "user", "content": prompt}]})
        return resp.json()["choices"][0]["message"]["content"]
""",
}


def test_a_project_http_helper_posting_what_it_is_given(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, HTTP_HELPERS)
    # _request_api(api_path, payload) posts its payload to f"{api_base}{api_path}": asked a chat body (or
    # Ollama's /api/generate with a prompt), its call is the request; the post inside is one too.
    assert calls[("ollama_service.py", 11)][0] == "http.post"
    assert calls[("ollama_service.py", 17)][0] == "http.post"
    assert calls[("ollama_service.py", 34)][0] == "http.post"
    # The embeddings asked through the same helper are no model call, and neither are their callers.
    assert ("ollama_service.py", 22) not in calls
    assert ("ollama_service.py", 26) not in calls
    # requests.post run in a thread by a helper (loop.run_in_executor(None, partial(func, *args, **kwargs))).
    assert calls[("provider.py", 16)][0] == "http.post"
    assert ("provider.py", 20) not in calls
    # Azure OpenAI's deployment address, the API version in its query.
    assert calls[("provider.py", 25)][0] == "http.post"


FACTORY = {
    "agent/__init__.py": "",
    "agent/models.py": """\
import together
from openai import OpenAI


class BaseModel:
    def __init__(self, args):
        self.args = args

    def query(self, history):
        raise NotImplementedError


class OpenAIModel(BaseModel):
    def query(self, history):
        response = OpenAI().chat.completions.create(model=self.args.name, messages=history)
        return response.choices[0].message.content


class TogetherModel(BaseModel):
    def query(self, history):
        completion = together.Complete.create(model=self.args.name, prompt=history[-1]["content"])
        return completion["choices"][0]["text"]


class HumanModel(BaseModel):
    def query(self, history):
        return input("> ")


def get_model(args):
    if args.name == "human":
        return HumanModel(args)
    if args.name.startswith("gpt"):
        return OpenAIModel(args)
    return TogetherModel(args)
""",
    "agent/agents.py": """\
import subprocess

from agent.models import get_model


class Agent:
    def __init__(self, args):
        self.model = get_model(args)

    def step(self, history):
        action = self.model.query(history)
        subprocess.run(action, shell=True)
""",
}


def test_a_factory_building_one_of_several_model_classes_by_name(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, FACTORY)
    # get_model returns HumanModel, OpenAIModel or TogetherModel by the name asked for: self.model is
    # whichever was built, so self.model.query(...) asks a model (whose action runs as a shell command).
    assert calls[("agent/agents.py", 11)] == ("BaseModel.query", "required")
    # Together's module API before its client (together < 1.0).
    assert calls[("agent/models.py", 21)][0] == "together.Complete.create"
