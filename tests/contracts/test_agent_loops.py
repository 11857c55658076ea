"""Agent loops whose model answer becomes tool calls that run unconfirmed (the modes 13 round), each a
small project.

Written from what real agent servers and frameworks do (a stateful agent server handing the answer's
tool call to an executor a factory picks by the tool's type; an agent base class whose subclasses carry
their own tools); the repositories themselves stay out of this repository, only their hand labels are
kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

AGENT = """\
import json

from openai import OpenAI

from app.manager import ToolExecutionManager


class Agent:
    def step(self, messages):
        response = OpenAI().chat.completions.create(model="gpt-4o", messages=messages)
        tool_call = response.choices[0].message.tool_calls[0]
        return self._handle(tool_call)

    def _handle(self, tool_call):
        name = tool_call.function.name
        args = json.loads(tool_call.function.arguments)
        return self._execute_tool(name, args)

    def _execute_tool(self, tool_name, tool_args):
        manager = ToolExecutionManager()
        return manager.execute_tool(function_name=tool_name, function_args=tool_args, tool=self.tool)
"""

MANAGER = """\
from app.executors import CoreToolExecutor, SandboxToolExecutor, ToolExecutor


class ToolExecutorFactory:
    _executor_map = {"core": CoreToolExecutor}

    @classmethod
    def get_executor(cls, tool_type) -> ToolExecutor:
        executor_class = cls._executor_map.get(tool_type, SandboxToolExecutor)
        return executor_class()


class ToolExecutionManager:
    def execute_tool(self, function_name, function_args, tool):
        executor = ToolExecutorFactory.get_executor(tool.tool_type)
        return executor.execute(function_name, function_args, tool)
"""

EXECUTORS = """\
import subprocess
from abc import ABC, abstractmethod


class ToolExecutor(ABC):
    @abstractmethod
    def execute(self, function_name, function_args, tool):
        raise NotImplementedError


class CoreToolExecutor(ToolExecutor):
    def execute(self, function_name, function_args, tool):
        return {"memory": function_args}


class SandboxToolExecutor(ToolExecutor):
    def execute(self, function_name, function_args, tool):
        return subprocess.run(["python", "-c", tool.source_code, str(function_args)], capture_output=True)
"""


def test_an_executor_a_factory_method_hands_out_as_an_abstract_class_runs_its_subclasses(tmp_path: Path) -> None:
    # letta: the agent hands the answer's tool call to a manager, which asks a factory's classmethod
    # (annotated "-> ToolExecutor", an ABC) for the executor of the tool's type; the sandbox executor runs
    # the tool's code in a subprocess. The object's class was unknown, so the tool run was not followed.
    files = {"app/__init__.py": "", "app/agent.py": AGENT, "app/manager.py": MANAGER, "app/executors.py": EXECUTORS}
    calls = scan_calls(tmp_path, files)
    assert calls[("app/agent.py", 10)][1:] == ("required", ("R1",))


SESSION_CONTEXT = """\
from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

import attr

if TYPE_CHECKING:
    from app.conversation import Conversation

SESSION_CONTEXT: ContextVar[SessionContext] = ContextVar("app:session_context")


@attr.define()
class SessionContext:
    conversation: Conversation = attr.field()
"""

CONVERSATION = """\
import subprocess


class Conversation:
    def run_command(self, command):
        return subprocess.run(command, capture_output=True, text=True).stdout
"""

AGENT_HANDLER = """\
import shlex

from openai import OpenAI

from app.session_context import SESSION_CONTEXT

client = OpenAI()


def add_agent_context(messages):
    reply = client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content
    ctx = SESSION_CONTEXT.get()
    for command in reply.splitlines():
        ctx.conversation.run_command(shlex.split(command))
"""


def test_an_object_a_context_variable_holds_is_typed_by_its_annotation_and_its_fields_by_theirs(tmp_path: Path) -> None:
    # mentat: the session's objects live in a ContextVar[SessionContext], whose attrs fields are annotated
    # with the project's classes (imported for type checking only); the reply's lines are run as shell
    # commands by ctx.conversation.run_command. The receiver was untyped: the name alone said reviewed.
    files = {
        "app/__init__.py": "", "app/session_context.py": SESSION_CONTEXT, "app/conversation.py": CONVERSATION,
        "app/agent_handler.py": AGENT_HANDLER,
    }
    calls = scan_calls(tmp_path, files)
    assert calls[("app/agent_handler.py", 11)][1:] == ("required", ("R1",))
