"""Held out, the codeexec round: model-written code run later, through the project's own classes.

Written from what real coding and data agents do (a code interpreter class whose subclass runs a
notebook cell, one abstract model class per provider chosen by a config, the model's code run by
an agent method); the repositories themselves stay out of this repository, only their hand labels
are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls, scan_modes

# The interpreter's public method is the base class's: it restarts and runs the cell with the
# subclass's exec_cell, which makes the output a notebook cell and executes it in a kernel.
INTERPRETER = {
    "app/__init__.py": "",
    "app/execute.py": """\
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook


class CodeInterpreter:
    def exec_cell(self, code):
        raise NotImplementedError()

    def exec_isolation(self, code):
        return self.exec_cell(code)


class LocalCodeInterpreter(CodeInterpreter):
    def __init__(self):
        self.nb = new_notebook()
        self.client = NotebookClient(self.nb)

    def exec_cell(self, code):
        self.nb.cells.append(new_code_cell(code))
        cell = self.nb.cells[-1]
        self.client.execute_cell(cell, len(self.nb.cells) - 1)
        return cell.outputs
""",
    "app/coder.py": """\
from openai import OpenAI

from app.execute import LocalCodeInterpreter


def write_and_run(task):
    code = OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": task}]).choices[0].message.content
    with LocalCodeInterpreter() as interpreter:
        return interpreter.exec_isolation(code)
""",
}


def test_a_method_the_interpreter_inherits_from_its_base_class_is_followed_there(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, INTERPRETER)
    # LocalCodeInterpreter.exec_isolation is CodeInterpreter's: looked up in the subclass alone, it was
    # no project function, and the code the model wrote was "free text".
    assert calls[("app/coder.py", 7)] == ("chat.completions.create", "required")


# One abstract model class and its providers in one module; the roles' models are built from a
# config holding the classes (Type[LMM]); the coder function asks whichever it is given (coder: LMM)
# and the agent runs the code it wrote.
ROLES = {
    **INTERPRETER,
    "app/coder.py": "",
    "app/lmm.py": """\
from abc import ABC, abstractmethod

from openai import OpenAI


class LMM(ABC):
    @abstractmethod
    def chat(self, messages):
        pass

    @abstractmethod
    def __call__(self, input):
        pass


class OpenAILMM(LMM):
    def __init__(self):
        self.client = OpenAI()

    def __call__(self, input):
        return self.chat(input)

    def chat(self, messages):
        response = self.client.chat.completions.create(model="m", messages=messages)
        return response.choices[0].message.content
""",
    "app/config.py": """\
from typing import Type

from app.lmm import LMM, OpenAILMM


class Config:
    coder: Type[LMM] = OpenAILMM
    summarizer: Type[LMM] = OpenAILMM

    def create_coder(self) -> LMM:
        return self.coder()

    def create_summarizer(self) -> LMM:
        return self.summarizer()
""",
    "app/agent.py": """\
from app.config import Config
from app.execute import LocalCodeInterpreter
from app.lmm import LMM


def write_code(coder: LMM, task: str) -> str:
    return coder([{"role": "user", "content": task}])


class CoderAgent:
    def __init__(self, coder=None):
        self.coder = coder if coder is not None else Config().create_coder()

    def run(self, task):
        code = write_code(self.coder, task)
        return LocalCodeInterpreter().exec_isolation(code)
""",
}


def test_a_model_typed_by_its_abstract_base_is_called_and_its_code_run(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, ROLES)
    # coder: LMM, the abstract class the providers of the same module derive from: calling it asks
    # one of them (it was not seen at all), and what the agent does with the code reaches the provider.
    assert calls[("app/agent.py", 7)] == ("LMM.__call__", "required")
    assert calls[("app/agent.py", 15)][1] == "required"  # write_code (named by the coder it is given on main since the classes round)
    assert calls[("app/lmm.py", 24)] == ("chat.completions.create", "required")
    # coder: Type[LMM] holds the class: self.coder() builds a model, it asks nothing.
    assert not [where for where in calls if where[0] == "app/config.py"]


# A library agent's tool loop: the reply's tool calls go to the handler the app put in the agent's
# options (or to its AgentTools' tool_handler); which tools run there is the app's choice.
ROUTED = {
    "squad/__init__.py": "",
    "squad/agent.py": """\
from anthropic import Anthropic


class AnthropicAgent:
    def __init__(self, options):
        self.client = Anthropic()
        self.tool_config = options.tool_config

    def process_tool_block(self, response, conversation):
        if "useToolHandler" in self.tool_config:
            return self.tool_config["useToolHandler"](response, conversation)
        return self.tool_config["tool"].tool_handler(response, conversation)

    def run(self, messages):
        while True:
            response = self.client.messages.create(model="m", max_tokens=512, messages=messages)
            if response.stop_reason != "tool_use":
                return response.content[0].text
            messages.append(self.process_tool_block(response, messages))
""",
}


def test_tool_calls_handed_to_the_app_s_tool_handler_are_not_analysed_not_a_mere_branch(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, ROUTED)
    # The tools the handler runs are not in this code: unresolved (R7, reviewed), not a choice of
    # branch only (R10, sampled), as agent-squad's Anthropic and Bedrock agents were rated.
    assert calls[("squad/agent.py", 16)][1:] == ("reviewed", ("R7",))


# An orchestrator: a classifier's result names the agent (a dataclass whose field is typed by the
# agents' abstract base, re-exported by its package), and the agent runs inside a timing helper.
ORCHESTRATED = {
    "orch/__init__.py": "",
    "orch/agents/__init__.py": "from orch.agents.agent import Agent\n",
    "orch/agents/agent.py": """\
from abc import ABC, abstractmethod


class Agent(ABC):
    @abstractmethod
    async def process_request(self, text):
        pass
""",
    "orch/agents/openai_agent.py": """\
from openai import AsyncOpenAI

from orch.agents.agent import Agent


class OpenAIAgent(Agent):
    def __init__(self):
        self.client = AsyncOpenAI()

    async def process_request(self, text):
        response = await self.client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
        return response.choices[0].message.content
""",
    "orch/classifiers/__init__.py": "from orch.classifiers.classifier import ClassifierResult\n",
    "orch/classifiers/classifier.py": """\
from dataclasses import dataclass
from typing import Optional

from orch.agents.agent import Agent


@dataclass
class ClassifierResult:
    selected_agent: Optional[Agent]
    confidence: float
""",
    "orch/orchestrator.py": """\
from orch.agents import Agent
from orch.classifiers import ClassifierResult


class Orchestrator:
    def __init__(self, default_agent: Agent):
        self.default_agent = default_agent

    async def measure_execution_time(self, name, fn):
        result = await fn()
        return result

    async def dispatch_to_agent(self, text, classifier_result: ClassifierResult):
        selected_agent = classifier_result.selected_agent
        response = await self.measure_execution_time("agent", lambda: selected_agent.process_request(text))
        return response

    async def route_request(self, text, classifier_result: ClassifierResult):
        return await self.dispatch_to_agent(text, classifier_result)
""",
}


def test_the_agent_a_re_exported_result_class_names_is_run(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, ORCHESTRATED)
    # ClassifierResult imported from its package: its field's annotation (Agent) was not found under the
    # package's name, so selected_agent.process_request(...) was nothing.
    assert calls[("orch/orchestrator.py", 15)][0] == "Agent.process_request"


def test_an_answer_returned_by_a_local_timer_running_a_lambda_is_handed_back(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, ORCHESTRATED)
    # measure_execution_time returns what calling the lambda returns: dispatch_to_agent hands back the
    # agent's answer, and route_request's call of it is a wrapper call site (agent-squad's orchestrator).
    assert calls[("orch/orchestrator.py", 19)][0] == "Orchestrator.dispatch_to_agent"
