"""Held out, the classes round: the class shapes real agent code writes.

Written from what real agents do (an SRE agent whose model class marks ``completion`` abstract
without deriving from ABC; a research lab whose agents inherit their one model step from a base
class beside them and whose code runner executes the model's code in a child process); the
repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

MODEL = """\
from abc import abstractmethod

import litellm


class LLM:
    @abstractmethod
    def completion(self, messages):
        pass

    def budget(self) -> int:
        return 10


class DefaultLLM(LLM):
    def completion(self, messages):
        return litellm.completion(model="gpt-4o", messages=messages)
"""

LOOP = """\
import subprocess

from app.llm import LLM


class ToolCallingLLM:
    def __init__(self, llm: LLM):
        self.llm = llm

    def call(self, messages):
        response = self.llm.completion(messages=messages)
        command = response.choices[0].message.content
        return subprocess.run(command, shell=True)
"""


def test_a_method_marked_abstract_on_a_class_not_deriving_from_abc_is_an_interface(tmp_path: Path) -> None:
    # class LLM: (no ABC) with @abstractmethod completion: self.llm.completion on an LLM runs DefaultLLM's,
    # and the loop runs the answer as a shell command.
    calls = scan_calls(tmp_path, {"app/__init__.py": "", "app/llm.py": MODEL, "app/loop.py": LOOP})
    assert calls[("app/loop.py", 11)][:2] == ("LLM.completion", "required")
    assert calls[("app/llm.py", 17)][:2] == ("completion", "required")


def test_a_class_with_no_abstract_method_stays_a_class(tmp_path: Path) -> None:
    # The same model class without the marker: its completion asks no model (pass), so a call on an LLM
    # is that class's method, no call site.
    plain = MODEL.replace("    @abstractmethod\n", "")
    calls = scan_calls(tmp_path / "plain", {"app/__init__.py": "", "app/llm.py": plain, "app/loop.py": LOOP})
    assert ("app/loop.py", 11) not in calls
    # Nor one deriving from another class (AgentVerse's BaseMemory(BaseModel), whose fields default to a
    # concrete memory): the marker alone is not taken for an interface there.
    derived = MODEL.replace("class LLM:", "class LLM(BaseModel):").replace("import litellm\n", "import litellm\nfrom pydantic import BaseModel\n")
    calls = scan_calls(tmp_path / "derived", {"app/__init__.py": "", "app/llm.py": derived, "app/loop.py": LOOP})
    assert ("app/loop.py", 11) not in calls


INFERENCE = """\
from openai import OpenAI


def query_model(prompt):
    reply = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return reply.choices[0].message.content
"""

AGENTS = """\
from inference import query_model


class BaseAgent:
    def __init__(self, model):
        self.model = model

    def inference(self, topic, phase):
        return query_model(f"{topic} {phase}")


class SWEngineerAgent(BaseAgent):
    def __init__(self, model):
        super().__init__(model)

    def context(self):
        return "sw"


class ReviewerAgent(BaseAgent):
    def inference(self, topic, phase):
        return "looks fine"
"""

LAB = """\
import subprocess

from agents import ReviewerAgent, SWEngineerAgent


class Workflow:
    def __init__(self):
        self.sw_engineer = SWEngineerAgent(model="gpt-4o")
        self.reviewer = ReviewerAgent(model="gpt-4o")

    def data_preparation(self, topic):
        resp = self.sw_engineer.inference(topic, "data preparation")
        subprocess.run(resp, shell=True)

    def review(self, topic):
        verdict = self.reviewer.inference(topic, "review")
        subprocess.run(verdict, shell=True)
"""


def test_a_wrapper_method_inherited_from_a_base_class_of_the_same_module_is_followed(tmp_path: Path) -> None:
    # SWEngineerAgent(BaseAgent), both in agents.py: the lab's self.sw_engineer.inference is BaseAgent's,
    # which returns query_model's answer, run as a shell command. ReviewerAgent overrides inference with
    # a fixed string: its call site is no model call.
    calls = scan_calls(tmp_path, {"inference.py": INFERENCE, "agents.py": AGENTS, "lab.py": LAB})
    assert calls[("lab.py", 12)][:2] == ("BaseAgent.inference", "required")
    assert calls[("inference.py", 5)][:2] == ("chat.completions.create", "required")
    assert ("lab.py", 16) not in calls


RUNNER = """\
import asyncio
import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor


def worker_run_code(code_str, output_queue):
    exec(code_str, {})
    output_queue.put("done")


def log_line(text, output_queue):
    output_queue.put(text.upper())


def execute_code(code_str):
    output_queue = multiprocessing.Queue()
    proc = multiprocessing.Process(target=worker_run_code, args=(code_str, output_queue))
    proc.start()
    proc.join(60)
    return output_queue.get()


def execute_in_thread(code_str):
    threading.Thread(target=worker_run_code, args=(code_str, [])).start()


def execute_in_pool(code_str):
    with ThreadPoolExecutor() as pool:
        return pool.submit(worker_run_code, code_str, []).result()


async def execute_later(code_str):
    return await asyncio.to_thread(worker_run_code, code_str, [])


def log_in_process(text):
    multiprocessing.Process(target=log_line, args=(text, multiprocessing.Queue())).start()
"""

STEPS = """\
from openai import OpenAI

from app.runner import RUNNER_NAME


def ask(task):
    return OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}]).choices[0].message.content


def step(task):
    code = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}]).choices[0].message.content
    return RUNNER_NAME(code)
"""


def test_a_function_handed_to_a_process_thread_or_pool_is_followed(tmp_path: Path) -> None:
    # execute_code starts multiprocessing.Process(target=worker_run_code, args=(code, q)), which exec()s
    # the code: the answer handed to it is code run; likewise a Thread's target, a pool's submit and
    # asyncio.to_thread. A process whose target only logs the text does nothing of the kind.
    for name, mode in [
        ("execute_code", "required"), ("execute_in_thread", "required"), ("execute_in_pool", "required"),
        ("execute_later", "required"), ("log_in_process", "autonomous"),
    ]:  # fmt: skip
        files = {"app/__init__.py": "", "app/runner.py": RUNNER, "app/steps.py": STEPS.replace("RUNNER_NAME", name)}
        calls = scan_calls(tmp_path / name, files)
        assert calls[("app/steps.py", 11)][:2] == ("chat.completions.create", mode), name


INVESTIGATOR = """\
import litellm


class ToolCallingLLM:
    def prompt_call(self, prompt):
        return litellm.completion(model="gpt-4o", messages=[{"role": "user", "content": prompt}])


class IssueInvestigator(ToolCallingLLM):
    def investigate(self, issue):
        res = self.prompt_call(issue)
        res.instructions = [issue]
        return res
"""

CONFIG = """\
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from app.loop import IssueInvestigator


class Config:
    @classmethod
    def load_from_file(cls, path: Optional[str]) -> "Config":
        return cls()

    def create_console_issue_investigator(self) -> "IssueInvestigator":
        from app.loop import IssueInvestigator

        return IssueInvestigator()


def make_investigator() -> Optional["IssueInvestigator"]:
    from app.loop import IssueInvestigator

    return IssueInvestigator()
"""

CLI = """\
import subprocess

from app.config import Config, make_investigator


def investigate(issue):
    config = Config.load_from_file(None)
    ai = config.create_console_issue_investigator()
    result = ai.investigate(issue)
    subprocess.run(result.choices[0].message.content, shell=True)


def quick(issue):
    ai = make_investigator()
    print(ai.investigate(issue))
"""


def test_a_factory_annotated_with_a_class_imported_under_type_checking_hands_out_that_class(tmp_path: Path) -> None:
    # Config.load_from_file -> "Config", then config.create_console_issue_investigator() -> "IssueInvestigator"
    # (imported under TYPE_CHECKING, built from an import in the body): ai.investigate is the wrapper of
    # that class, its answer run as a shell command; a module-level factory -> Optional["..."] likewise.
    files = {"app/__init__.py": "", "app/loop.py": INVESTIGATOR, "app/config.py": CONFIG, "app/cli.py": CLI}
    calls = scan_calls(tmp_path, files)
    assert calls[("app/cli.py", 9)][:2] == ("IssueInvestigator.investigate", "required")
    assert calls[("app/cli.py", 15)][:2] == ("IssueInvestigator.investigate", "autonomous")


BACKEND = """\
from abc import ABC, abstractmethod


class APIBackend(ABC):
    def build_messages_and_create_chat_completion(self, user_prompt, system_prompt=None):
        messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_prompt}]
        return self._create_chat_completion_inner_function(messages)

    @abstractmethod
    def _create_chat_completion_inner_function(self, messages):
        raise NotImplementedError
"""

LITELLM_BACKEND = """\
from litellm import completion

from app.backend.base import APIBackend


class LiteLLMAPIBackend(APIBackend):
    def _create_chat_completion_inner_function(self, messages):
        response = completion(model="gpt-4o", messages=messages)
        return response.choices[0].message.content
"""

LLM_UTILS = """\
import importlib
from typing import Any

from app.backend.base import APIBackend as BaseAPIBackend


def get_api_backend(*args: Any, **kwargs: Any) -> BaseAPIBackend:
    module, _, name = "app.backend.lite.LiteLLMAPIBackend".rpartition(".")
    api_backend_cls = getattr(importlib.import_module(module), name)
    return api_backend_cls(*args, **kwargs)


APIBackend = get_api_backend
"""

CODER = """\
import subprocess

from app.llm_utils import APIBackend


def implement(task):
    code = APIBackend().build_messages_and_create_chat_completion(task, "write python")
    subprocess.run(["python", "-c", code])
"""


def test_an_alias_of_a_factory_annotated_with_an_abstract_backend_is_that_backend(tmp_path: Path) -> None:
    # APIBackend = get_api_backend ("-> BaseAPIBackend", the ABC imported under another name, the class
    # itself loaded by name): APIBackend().build_messages_and_create_chat_completion is the base's wrapper,
    # which asks the subclass's litellm completion; the answer runs as Python.
    files = {
        "app/__init__.py": "", "app/backend/__init__.py": "", "app/backend/base.py": BACKEND,
        "app/backend/lite.py": LITELLM_BACKEND, "app/llm_utils.py": LLM_UTILS, "app/coder.py": CODER,
    }  # fmt: skip
    calls = scan_calls(tmp_path, files)
    assert calls[("app/coder.py", 7)][:2] == ("APIBackend.build_messages_and_create_chat_completion", "required")
    assert calls[("app/backend/lite.py", 8)][:2] == ("completion", "required")
