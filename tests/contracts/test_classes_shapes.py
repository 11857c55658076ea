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
    calls = scan_calls(tmp_path, {"app/__init__.py": "", "app/llm.py": plain, "app/loop.py": LOOP})
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
