"""Computer-use agents: actions the model picks run on a desktop through the project's own
computer classes, or through a computer-use SDK's machine (cua's ``Computer``, E2B Desktop).

Shapes read in trycua/cua (its agent runs each ``computer_call`` as ``getattr(computer,
action_type)(**action_args)`` on a handler typed with its protocol), and in the other
desktop agents of the held-out table (tests/contracts/heldout/)."""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

HANDLER_PROTOCOL = """\
from typing import Protocol


class ComputerHandler(Protocol):
    async def click(self, x: int, y: int) -> None: ...

    async def type(self, text: str) -> None: ...

    async def screenshot(self) -> str: ...
"""
DESK_HANDLER = """\
import pyautogui

from .base import ComputerHandler


class DeskHandler(ComputerHandler):
    async def click(self, x: int, y: int) -> None:
        pyautogui.click(x, y)

    async def type(self, text: str) -> None:
        pyautogui.write(text)

    async def screenshot(self) -> str:
        return pyautogui.screenshot()
"""
ACTING_AGENT = """\
from typing import Optional

import litellm

from .computers import ComputerHandler


class Agent:
    def __init__(self, computer: ComputerHandler):
        self.computer = computer

    async def _handle_item(self, item, computer: Optional[ComputerHandler] = None):
        action = item.get("action")
        action_type = action.get("type")
        action_args = {k: v for k, v in action.items() if k != "type"}
        method = getattr(computer, action_type, None)
        if method:
            await method(**action_args)

    async def run(self, messages):
        response = await litellm.aresponses(model="computer-use-preview", input=messages)
        for item in response.output:
            await self._handle_item(item, computer=self.computer)
"""


def test_a_method_picked_by_name_on_a_computer_typed_with_a_protocol_runs_its_implementers(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {
        "app/__init__.py": "", "app/computers/__init__.py": "from .base import ComputerHandler\n",
        "app/computers/base.py": HANDLER_PROTOCOL, "app/computers/desk.py": DESK_HANDLER, "app/agent.py": ACTING_AGENT,
    })  # fmt: skip
    # The answer names the method (click, type) and fills its arguments: the desk handler clicks and types.
    assert calls[("app/agent.py", 21)] == ("aresponses", "required", ("R1",))


READING_HANDLER = """\
from .base import ComputerHandler


class LogHandler(ComputerHandler):
    async def click(self, x: int, y: int) -> None:
        print("click", x, y)

    async def type(self, text: str) -> None:
        print("type", text)

    async def screenshot(self) -> str:
        return ""
"""


def test_a_computer_whose_methods_only_print_stays_free_text(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {
        "app/__init__.py": "", "app/computers/__init__.py": "from .base import ComputerHandler\n",
        "app/computers/base.py": HANDLER_PROTOCOL, "app/computers/log.py": READING_HANDLER, "app/agent.py": ACTING_AGENT,
    })  # fmt: skip
    assert calls[("app/agent.py", 21)][1] == "autonomous"


# cua's own computer SDK: the handler drives the machine through Computer().interface.
CUA_HANDLER = """\
from computer import Computer


class CuaHandler:
    def __init__(self, cua_computer: Computer):
        self.interface = cua_computer.interface

    async def act(self, text: str) -> None:
        await self.interface.left_click(10, 10)
        await self.interface.type_text(text)
"""
CUA_AGENT = """\
from openai import AsyncOpenAI

from app.handler import CuaHandler

client = AsyncOpenAI()


async def step(handler: CuaHandler, task: str) -> None:
    response = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    await handler.act(response.choices[0].message.content)
"""
# E2B Desktop's sandbox: keys pressed and text typed on its virtual desktop.
E2B_DESKTOP = """\
from e2b_desktop import Sandbox
from openai import OpenAI

client = OpenAI()
desktop = Sandbox()


def step(task: str) -> None:
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    desktop.write(response.choices[0].message.content)
    desktop.press("enter")
"""


def test_cua_computer_interface_input_is_code_execution(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app/__init__.py": "", "app/handler.py": CUA_HANDLER, "app/agent.py": CUA_AGENT})
    assert calls[("app/agent.py", 9)] == ("chat.completions.create", "required", ("R1",))


def test_e2b_desktop_keys_and_text_are_code_execution(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": E2B_DESKTOP})
    assert calls[("app.py", 9)] == ("chat.completions.create", "required", ("R1",))


LOG_FILE = """\
from e2b_desktop import Sandbox
from openai import OpenAI

client = OpenAI()
desktop = Sandbox()


def step(task: str, log) -> None:
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    log.write(response.choices[0].message.content)
"""


def test_a_common_verb_on_another_object_beside_e2b_desktop_is_not_input(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": LOG_FILE})
    assert calls[("app.py", 9)][1] != "required"


# An executor object of another module called with the answer (computer_use_ootb's loop:
# executor(response, messages) with executor = AnthropicExecutor(...)): its __call__ runs.
SHELL_EXECUTOR = """\
import subprocess


class Executor:
    def __call__(self, command: str) -> str:
        return subprocess.run(command, shell=True, capture_output=True, text=True).stdout
"""
CALLING_LOOP = """\
from anthropic import Anthropic

from app.executor import Executor

client = Anthropic()


def loop(messages):
    executor = Executor()
    response = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=messages)
    return executor(response.content[0].text)
"""


def test_an_executor_object_of_another_module_called_with_the_answer_runs_its_call(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app/__init__.py": "", "app/executor.py": SHELL_EXECUTOR, "app/loop.py": CALLING_LOOP})
    assert calls[("app/loop.py", 10)] == ("messages.create", "required", ("R1",))


# A tool collection run by the name the model gave (computer_use_ootb's AnthropicExecutor, the
# Anthropic computer-use demo's ToolCollection): every tool it holds may run.
TOOL_COLLECTION = """\
import subprocess


class BashTool:
    name = "bash"

    async def __call__(self, command: str):
        return subprocess.run(command, shell=True, capture_output=True).stdout

    def to_params(self):
        return {"name": self.name, "type": "bash_20250124"}


class ToolCollection:
    def __init__(self, *tools):
        self.tools = tools
        self.tool_map = {tool.to_params()["name"]: tool for tool in tools}

    def to_params(self):
        return [tool.to_params() for tool in self.tools]

    async def run(self, *, name: str, tool_input: dict):
        tool = self.tool_map.get(name)
        return await tool(**tool_input)
"""
COLLECTION_EXECUTOR = """\
import asyncio

from app.tools import BashTool, ToolCollection


class Executor:
    def __init__(self):
        self.tool_collection = ToolCollection(BashTool())

    def __call__(self, response, messages):
        for block in response.content:
            result = asyncio.run(self.tool_collection.run(name=block.name, tool_input=block.input))
            messages.append(result)
        return messages
"""
COLLECTION_LOOP = """\
from anthropic import Anthropic

from app.executor import Executor

client = Anthropic()


def loop(messages):
    executor = Executor()
    response = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=messages)
    executor(response, messages)
"""


def test_a_tool_collection_run_by_the_name_the_model_gave_reaches_its_tools(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {
        "app/__init__.py": "", "app/tools.py": TOOL_COLLECTION, "app/executor.py": COLLECTION_EXECUTOR, "app/loop.py": COLLECTION_LOOP,
    })  # fmt: skip
    assert calls[("app/loop.py", 10)] == ("messages.create", "required", ("R1",))


# A client's resource kept under a name (open-computer-use's providers: self.client is
# OpenAI(...).chat.completions or Anthropic(...).messages, made by a method each subclass defines).
RESOURCE_KEPT = """\
from openai import OpenAI


class Provider:
    def __init__(self, model):
        self.model = model
        self.client = OpenAI().chat.completions

    def completion(self, messages):
        return self.client.create(messages=messages, model=self.model)
"""
RESOURCE_MADE_BY_SUBCLASSES = """\
from anthropic import Anthropic
from openai import OpenAI


class Provider:
    def __init__(self, model):
        self.model = model
        self.client = self.create_client()

    def completion(self, messages):
        return self.client.create(messages=messages, model=self.model)


class OpenAIProvider(Provider):
    def create_client(self):
        return OpenAI().chat.completions


class AnthropicProvider(Provider):
    def create_client(self):
        return Anthropic().messages
"""


def test_a_client_resource_kept_under_a_name_is_called_through_it(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"kept.py": RESOURCE_KEPT, "made.py": RESOURCE_MADE_BY_SUBCLASSES})
    assert calls[("kept.py", 10)][0] == "chat.completions.create"
    assert calls[("made.py", 11)][0] == "chat.completions.create"


# An agent handed an E2B sandbox by its entry point (open-computer-use's SandboxAgent): the module
# imports no E2B package, the call is E2B's on an object named a sandbox.
SANDBOX_HANDED = """\
from openai import OpenAI

client = OpenAI()


class SandboxAgent:
    def __init__(self, sandbox):
        self.sandbox = sandbox

    def run(self, messages):
        completion = client.chat.completions.create(model="gpt-4o", messages=messages)
        return self.sandbox.commands.run(completion.choices[0].message.content, timeout=5).stdout
"""


def test_a_command_run_on_an_object_named_a_sandbox_is_code_execution(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"agent.py": SANDBOX_HANDED})
    assert calls[("agent.py", 11)][1:] == ("required", ("R1",))


# The tool call's name picks a method of the agent, looked up only when the tools table has it
# (open-computer-use's call_function: getattr(self, name) if name in tools else None).
GUARDED_LOOKUP = """\
import pyautogui
from openai import OpenAI

client = OpenAI()
tools = {"stop": {"description": "Stop.", "params": {}}}


class DesktopAgent:
    def type_text(self, text):
        pyautogui.write(text)

    def call_function(self, name, arguments):
        func_impl = getattr(self, name.lower()) if name.lower() in tools else None
        return func_impl(**arguments) if func_impl else "Function not implemented."

    def run(self, messages):
        completion = client.chat.completions.create(model="gpt-4o", messages=messages)
        for tool_call in completion.choices[0].message.tool_calls:
            self.call_function(tool_call.function.name, tool_call.function.arguments)
"""


def test_a_method_looked_up_by_name_in_a_conditional_expression_is_dispatched(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"agent.py": GUARDED_LOOKUP})
    mode, rules = calls[("agent.py", 17)][1:]
    assert mode == "required" and "R1" in rules
