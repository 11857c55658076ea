"""Held out, the factories round: clients loaded lazily, handlers built by factories.

Written from what real agents do (a specialised agent whose ``litellm`` is a property importing
the SDK on first use; a browser agent whose every prompt goes through a handler closure that a
factory builds, handed on by an override and an organisation-aware default, called at once or
kept under a name); the repositories themselves stay out of this repository, only their hand
labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

LAZY_AGENT = """\
import subprocess


class CodeAgent:
    def __init__(self, model="gpt-4o"):
        self.model = model
        self._litellm = None

    @property
    def litellm(self):
        \"\"\"Lazy load litellm.\"\"\"
        if self._litellm is None:
            try:
                import litellm
                self._litellm = litellm
            except ImportError:
                raise ImportError("litellm required")
        return self._litellm

    def generate(self, prompt: str) -> str:
        response = self.litellm.completion(model=self.model, messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content

    def run(self, task: str) -> None:
        subprocess.run(self.generate(task), shell=True)
"""


def test_a_property_importing_the_sdk_on_first_use_is_the_sdk(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {"agent/__init__.py": "", "agent/code_agent.py": LAZY_AGENT})
    # self.litellm is the module the property imports and returns: litellm.completion, its answer run as a command.
    assert calls[("agent/code_agent.py", 21)] == ("completion", "required")
    assert calls[("agent/code_agent.py", 25)] == ("CodeAgent.generate", "required")


def test_a_cached_property_building_the_client_is_the_client(tmp_path: Path) -> None:
    agent = """\
from functools import cached_property

from openai import OpenAI


class Base:
    @cached_property
    def client(self):
        return OpenAI()

    def describe(self) -> str:
        return "base"


class Writer(Base):
    def write(self, topic: str) -> str:
        reply = self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": topic}])
        return reply.choices[0].message.content

    @property
    def name(self) -> str:
        return self.describe()
"""
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/writer.py": agent})
    assert calls[("app/writer.py", 17)] == ("chat.completions.create", "autonomous")
    assert len(calls) == 1  # a property returning anything else (self.name) is no client


FACTORY = """\
import json
from typing import Any

import litellm


class LLMAPIHandlerFactory:
    @staticmethod
    def get_llm_api_handler(llm_key: str):
        async def llm_api_handler(prompt: str, **kwargs: Any) -> dict[str, Any]:
            response = await litellm.acompletion(model=llm_key, messages=[{"role": "user", "content": prompt}])
            return json.loads(response.choices[0].message.content)

        return llm_api_handler

    @staticmethod
    def _maybe_get_flex_handler(default):
        if not default:
            return None
        flex_handler = LLMAPIHandlerFactory.get_llm_api_handler("flex")
        return flex_handler

    @staticmethod
    def wrap_for_flex_routing(handler):
        async def flex_aware_handler(*args: Any, **kwargs: Any) -> Any:
            flex_handler = LLMAPIHandlerFactory._maybe_get_flex_handler(handler)
            target = flex_handler if flex_handler is not None else handler
            return await target(*args, **kwargs)

        return flex_aware_handler

    @staticmethod
    def get_override_llm_api_handler(override_llm_key, *, default):
        if not override_llm_key:
            flex_handler = LLMAPIHandlerFactory._maybe_get_flex_handler(default)
            if flex_handler is not None:
                return flex_handler
            return default
        return LLMAPIHandlerFactory.get_llm_api_handler(override_llm_key)


def _resolve_org_default_llm_handler(llm_key, fallback):
    if llm_key:
        return LLMAPIHandlerFactory.get_llm_api_handler(llm_key)
    return fallback


def get_org_aware_primary_llm_api_handler(default=None):
    return _resolve_org_default_llm_handler("org", default)
"""

AGENT = """\
import subprocess

from app.factory import LLMAPIHandlerFactory, get_org_aware_primary_llm_api_handler


class Agent:
    async def step(self, task):
        llm_api_handler = LLMAPIHandlerFactory.get_override_llm_api_handler(
            task.llm_key, default=get_org_aware_primary_llm_api_handler()
        )
        json_response = await llm_api_handler(prompt=task.prompt)
        for action in json_response["actions"]:
            subprocess.run(action["command"], shell=True)

    async def verify(self, task):
        verdict = await get_org_aware_primary_llm_api_handler()(prompt=task.prompt)
        if verdict["complete"]:
            task.done = True
"""


def test_a_handler_a_factory_builds_is_called_where_an_override_or_a_default_hands_it_on(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/factory.py": FACTORY, "app/agent.py": AGENT})
    # get_override_llm_api_handler returns what get_llm_api_handler (or _maybe_get_flex_handler, returning
    # it under a name) hands out: the closure asking litellm. Its caller runs the answer's commands.
    assert calls[("app/agent.py", 11)] == ("LLMAPIHandlerFactory.get_override_llm_api_handler()", "required")
    # The organisation-aware default (a function returning a function returning the factory's handler),
    # called at once: its verdict is branched on.
    assert calls[("app/agent.py", 16)] == ("get_org_aware_primary_llm_api_handler()", "sampled")
    # The call inside the closure is as strict as the strictest caller of what hands it out.
    assert calls[("app/factory.py", 11)] == ("acompletion", "required")


def test_a_wrapper_calling_the_handler_it_picks_by_a_condition_is_a_call_site(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/factory.py": FACTORY})
    # target = flex_handler if … else handler, flex_handler handed out by _maybe_get_flex_handler.
    assert calls[("app/factory.py", 28)][0] == "LLMAPIHandlerFactory._maybe_get_flex_handler()"


ENGINES = """\
from typing import Optional

from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.multi_modal_llms import MultiModalLLM
from llama_index.multi_modal_llms.openai import OpenAIMultiModal

from app.context import get_default_context


class PythonEngine:
    def __init__(self, llm: Optional[BaseLLM] = None, ocr_mm_llm=None, ocr_llm=None):
        self.llm = llm or get_default_context()
        self.ocr_mm_llm = ocr_mm_llm or OpenAIMultiModal(model="gpt-4o-mini")
        self.ocr_llm = ocr_llm or self.llm

    def read(self, prompt, shots):
        text = self.ocr_mm_llm.complete(image_documents=shots, prompt=prompt).text
        return self.ocr_llm.complete(f"Phrase {text}").text


class WorldModel:
    def __init__(self, mm_llm: MultiModalLLM = None):
        self.mm_llm: MultiModalLLM = mm_llm

    def get_instruction(self, prompt, images):
        return self.mm_llm.complete(prompt, image_documents=images).text
"""


def test_a_client_defaulted_with_or_is_the_client(tmp_path: Path) -> None:
    context = "def get_default_context():\n    return None\n"
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/context.py": context, "app/engines.py": ENGINES})
    # ocr_mm_llm or OpenAIMultiModal(...): the parameter, else LlamaIndex's OpenAI image model built on the spot;
    # ocr_llm or self.llm, with self.llm the parameter typed BaseLLM (or a default nothing is known of).
    assert calls[("app/engines.py", 17)] == ("complete", "autonomous")
    assert calls[("app/engines.py", 18)] == ("complete", "autonomous")


def test_llamaindex_base_and_image_model_annotations_are_models(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/context.py": "", "app/engines.py": ENGINES})
    # mm_llm: MultiModalLLM, LlamaIndex's base class of the image models.
    assert calls[("app/engines.py", 26)] == ("complete", "autonomous")


def test_super_in_a_subclass_of_an_sdk_model_is_the_sdk_s_request(tmp_path: Path) -> None:
    provider = """\
from typing import Any

from langchain_core.messages import AIMessage
from langchain_ollama import ChatOllama


class DeepSeekR1ChatOllama(ChatOllama):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

    async def ainvoke(self, input, config=None, **kwargs: Any) -> AIMessage:
        org_ai_message = await super().ainvoke(input=input)
        return AIMessage(content=org_ai_message.content.split("</think>")[1])


class Plain:
    def invoke(self, text):
        return super().invoke(text)
"""
    calls = scan_modes(tmp_path, {"src/__init__.py": "", "src/llm_provider.py": provider})
    # ChatOllama's own ainvoke, asked by the override; __init__ builds, and a class of no SDK asks nothing.
    assert calls == {("src/llm_provider.py", 12): ("ainvoke", "autonomous")}


def test_an_index_s_query_engine_answers_with_the_model(tmp_path: Path) -> None:
    engine = """\
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.llms.base import BaseLLM


class PythonEngine:
    def __init__(self, llm: BaseLLM):
        self.llm = llm

    def execute_instruction(self, page: str, prompt: str) -> str:
        index = VectorStoreIndex.from_documents([Document(text=page)])
        query_engine = index.as_query_engine(llm=self.llm)
        return query_engine.query(prompt).response.strip()
"""
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/engine.py": engine})
    assert calls[("app/engine.py", 12)] == ("query", "autonomous")
