"""Tools looked up by name in a registry (the required round): the model's answer names the tool,
so the run reaches every tool the registry can hold.

Written from what real agent code does (gptme's, SuperAGI's, ChatDev's and MetaGPT's tool maps, the
OpenAI cookbook's ``available_functions``); the repositories themselves stay out of this repository,
only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

COOKBOOK = """\
import json
import subprocess

from openai import OpenAI

client = OpenAI()


def run_shell(command):
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


def get_time(zone):
    return zone


available_functions = {{"run_shell": run_shell, "get_time": get_time}}


def step(messages):
    response = client.chat.completions.create(model="gpt-4o", messages=messages)
    call = response.choices[0].message.tool_calls[0]
    {dispatch}
"""


def test_a_dict_of_functions_looked_up_by_the_answer_reaches_every_function(tmp_path: Path) -> None:
    shapes = {
        "subscript.py": 'return available_functions[call.function.name](**json.loads(call.function.arguments))',
        "bound.py": 'fn = available_functions[call.function.name]\n    return fn(**json.loads(call.function.arguments))',
        "get.py": 'fn = available_functions.get(call.function.name)\n    return fn(**json.loads(call.function.arguments))',
    }
    calls = scan_calls(tmp_path, {name: COOKBOOK.format(dispatch=code) for name, code in shapes.items()})
    assert {where: (mode, rules) for where, (_api, mode, rules) in calls.items()} == {
        (name, 21): ("required", ("R1",)) for name in shapes
    }


def test_a_registry_of_read_only_functions_changes_nothing(tmp_path: Path) -> None:
    source = COOKBOOK.format(dispatch='return available_functions[call.function.name](**json.loads(call.function.arguments))')
    read_only = source.replace('"run_shell": run_shell, ', "")
    calls = scan_calls(tmp_path, {"agent.py": read_only})
    assert calls[("agent.py", 21)][1] != "required"


def test_a_literal_key_is_no_registry_look_up(tmp_path: Path) -> None:
    """``available_functions["get_time"]`` is one known function: the answer does not pick it."""
    source = COOKBOOK.format(dispatch='return available_functions["get_time"](call.function.arguments)')
    calls = scan_calls(tmp_path, {"agent.py": source})
    assert calls[("agent.py", 21)][1] != "required"


DECORATED = """\
import os

import anthropic

TOOLS = {}


def register(name):
    def add(fn):
        TOOLS[name] = fn
        return fn

    return add


@register("delete")
def delete_file(path):
    os.remove(path)


@register("read")
def read_file(path):
    with open(path) as handle:
        return handle.read()


def run(prompt):
    reply = anthropic.Anthropic().messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=[{"role": "user", "content": prompt}])
    name, _, arg = reply.content[0].text.partition(" ")
    return TOOLS[name](arg)
"""


def test_functions_a_decorator_registers_are_the_registry(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"agent.py": DECORATED})
    _api, mode, rules = calls[("agent.py", 28)]
    assert (mode, rules[0]) == ("required", "R3")  # delete_file; read_file reads files (R9)


CLASS_MAP = """\
import subprocess

from openai import OpenAI


class Terminal:
    def run_command(self, cmd):
        return subprocess.run(cmd, shell=True).returncode


class Role:
    def __init__(self):
        self.terminal = Terminal()
        self.client = OpenAI()
        self.tool_map = {"Plan.note": self.note}

    def note(self, text):
        return text

    def act(self, prompt):
        reply = self.client.responses.create(model="gpt-4o", input=prompt)
        commands = parse(reply.output_text)
        return self.run_commands(commands)

    def run_commands(self, commands):
        outputs = []
        for cmd in commands:
            tool = self.tool_map[cmd["command_name"]]
            outputs.append(tool(**cmd["args"]))
        return outputs


class Engineer(Role):
    def __init__(self):
        super().__init__()
        self.tool_map.update({"Terminal.run_command": self.terminal.run_command})


def parse(text):
    return [{"command_name": line.split()[0], "args": {}} for line in text.splitlines()]
"""


def test_entries_a_subclass_adds_to_self_s_map_are_the_registry(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"role.py": CLASS_MAP})
    assert calls[("role.py", 21)][1] == "required"
    without = CLASS_MAP.replace('        self.tool_map.update({"Terminal.run_command": self.terminal.run_command})\n', "        pass\n")
    assert scan_calls(tmp_path / "b", {"role.py": without})[("role.py", 21)][1] != "required"


GETATTR = """\
import smtplib

from openai import OpenAI


class Assistant:
    def __init__(self):
        self.client = OpenAI()

    def do_send_email(self, to, body):
        smtplib.SMTP("localhost").sendmail("me@example.com", to, body)

    def do_lookup(self, query):
        return query

    def reply(self, prompt):
        answer = self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
        action, _, argument = answer.choices[0].message.content.partition(":")
        return getattr(self, f"do_{action}")(argument)
"""


def test_getattr_on_self_reaches_the_methods_the_key_can_name(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"assistant.py": GETATTR})
    assert calls[("assistant.py", 17)][1:] == ("required", ("R5",))


CONFIG_TOOLS = """\
import subprocess


def run_shell(command):
    return subprocess.run(command, shell=True).returncode


def echo(text):
    return text


TOOLS = [run_shell, echo]
"""

CONFIG_AGENT = """\
from openai import OpenAI

from tools_config import TOOLS

BY_NAME = {tool.__name__: tool for tool in TOOLS}


def step(prompt):
    answer = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    name, _, argument = answer.choices[0].message.content.partition(" ")
    return BY_NAME[name](argument)
"""


def test_a_registry_built_from_an_entry_list_of_a_config_module(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"tools_config.py": CONFIG_TOOLS, "agent.py": CONFIG_AGENT})
    assert calls[("agent.py", 9)][1:] == ("required", ("R1",))


EXECUTOR = """\
class ToolExecutor:
    def __init__(self, tools):
        self.tools = tools

    def execute(self, tool_name, tool_args):
        tools = {tool.name: tool for tool in self.tools}
        tool = tools[tool_name]
        return tool.execute(tool_args)
"""

TOOL_CLASSES = """\
class BaseTool:
    name = "base"

    def execute(self, tool_input):
        return self._execute(tool_input)

    def _execute(self, tool_input):
        raise NotImplementedError
"""

SEND_EMAIL = """\
import smtplib

from base_tool import BaseTool


class SendEmailTool(BaseTool):
    name = "send_email"

    def _execute(self, tool_input):
        server = smtplib.SMTP("localhost")
        server.sendmail("agent@example.com", tool_input["to"], tool_input["body"])
"""

STEP = """\
import json

from openai import OpenAI

from tool_executor import ToolExecutor


def step(tools, prompt):
    reply = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    action = json.loads(reply.choices[0].message.content)
    return ToolExecutor(tools).execute(action["name"], action["args"])
"""


def test_tool_objects_the_module_does_not_show_run_whichever_project_class_has_the_method(tmp_path: Path) -> None:
    """``tools = {t.name: t for t in self.tools}; tools[name].execute(args)`` (SuperAGI's executor): the tools
    are handed in at run time, so ``execute`` is any project class's, down to its subclasses' ``_execute``."""
    files = {"tool_executor.py": EXECUTOR, "base_tool.py": TOOL_CLASSES, "send_email.py": SEND_EMAIL, "step.py": STEP}
    calls = scan_calls(tmp_path, files)
    assert calls[("step.py", 9)][1:] == ("required", ("R5",))


ABSTRACT_BASE = """\
from abc import ABC, abstractmethod

from openai import OpenAI


class Action(ABC):
    def perform(self, prompt):
        reply = OpenAI().responses.create(model="gpt-4o", input=prompt)
        return self.apply(reply.output_text)

    @abstractmethod
    def apply(self, text):
        '''What the action does with the model's text.'''
"""

SHELL_ACTION = """\
import subprocess

from action import Action


class ShellAction(Action):
    def apply(self, text):
        return subprocess.run(text, shell=True).returncode
"""


def test_an_abstract_method_the_answer_is_handed_to_runs_a_subclass_s(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"action.py": ABSTRACT_BASE, "shell_action.py": SHELL_ACTION})
    assert calls[("action.py", 8)][1:] == ("required", ("R1",))


# A registry class (vanna's ToolRegistry, Qwen-Agent's function_map): the tools are handed to ``register``,
# kept in ``self._tools``, read back through a getter method, and run by the registry's own ``execute``.
REGISTRY_AGENT = """\
from openai import OpenAI

from registry import ToolRegistry


class Agent:
    def __init__(self, registry: ToolRegistry):
        self.client = OpenAI()
        self.tool_registry = registry

    async def step(self, messages):
        response = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        for call in response.choices[0].message.tool_calls or []:
            result = await self.tool_registry.execute(call, {dispatch_context})
            messages.append({{"role": "tool", "content": result}})
        return messages
"""

TOOL_REGISTRY = """\
import json

from base import Tool


class ToolRegistry:
    def __init__(self):
        self._tools = {{}}

    def register(self, tool{annotation}):
        self._tools[tool.name] = tool

    async def get_tool(self, name):
        return self._tools.get(name)

    async def execute(self, call{context_param}):
        tool = await self.get_tool(call.function.name)
        if tool is None:
            return "no such tool"
        args = json.loads(call.function.arguments)
        return await tool.execute({context_arg}args)
"""

TOOL_BASE = """\
from abc import ABC, abstractmethod


class Tool(ABC):
    name = ""

    @abstractmethod
    async def execute(self, {context_param}args):
        ...
"""

SHELL_TOOLS = """\
import subprocess

from base import Tool


class ShellTool(Tool):
    name = "shell"

    async def execute(self, {context_param}args):
        return subprocess.run(args["command"], shell=True, capture_output=True, text=True).stdout


class ClockTool(Tool):
    name = "clock"

    async def execute(self, {context_param}args):
        return args.get("zone", "UTC")
"""


def _registry_project(*, context: bool = False, annotation: str = "", more: int = 0) -> dict[str, str]:
    fields = {
        "dispatch_context": "None" if context else "",
        "context_param": ", context" if context else "",
        "context_arg": "context, " if context else "",
        "annotation": annotation,
    }
    tool_fields = {"context_param": "context, " if context else ""}
    files = {
        "agent.py": REGISTRY_AGENT.format(**fields).replace("execute(call, )", "execute(call)"),
        "registry.py": TOOL_REGISTRY.format(**fields),
        "base.py": TOOL_BASE.format(**tool_fields),
        "tools/shell.py": SHELL_TOOLS.format(**tool_fields),
    }
    for n in range(more):  # other classes with an execute method, before the tools by path
        files[f"jobs/job_{n:02}.py"] = f"class Job{n}:\n    def execute(self, {tool_fields['context_param']}args):\n        return len(args)\n"
    return files


def test_a_registry_read_through_its_getter_method_runs_what_is_registered(tmp_path: Path) -> None:
    """``tool = await self.get_tool(name)`` with ``get_tool`` returning ``self._tools.get(name)``: a look-up
    in ``self._tools``; ``register(self, tool)`` stores whatever its callers hand in, so any project class
    with ``execute`` may be the one run (not what ``tool`` is bound to where the registry is read)."""
    calls = scan_calls(tmp_path, _registry_project())
    assert calls[("agent.py", 12)][1:] == ("required", ("R1",))


def test_a_registry_s_own_execute_is_not_one_of_its_tools(tmp_path: Path) -> None:
    """``ToolRegistry.execute(self, call, context)`` running ``tool.execute(context, args)``: the registry's
    own ``execute`` has that name too, but following into it again (with its other parameter) is no tool,
    and spent the modules left to follow before the shell tool was reached."""
    calls = scan_calls(tmp_path, _registry_project(context=True))
    assert calls[("agent.py", 12)][1:] == ("required", ("R1",))


def test_a_registry_typed_by_its_register_parameter_runs_every_subclass(tmp_path: Path) -> None:
    """``register(self, tool: Tool)``: the registry holds the project's subclasses of ``Tool``, every one of
    them (vanna's sixteen tools, its SQL and Python runners among the last by path), not the first dozen
    project classes that happen to have an ``execute`` method."""
    calls = scan_calls(tmp_path, _registry_project(annotation=": Tool", more=14))
    assert calls[("agent.py", 12)][1:] == ("required", ("R1",))
    # Unannotated, the registry may hold anything: any project class with the method, the first dozen.
    untyped = scan_calls(tmp_path / "untyped", _registry_project(more=14))
    assert untyped[("agent.py", 12)][1] != "required"
    # Annotated with a class no project class derives from (a Union, a library's base): as unannotated.
    other = scan_calls(tmp_path / "other", _registry_project(annotation=": Union[str, Tool]"))
    assert other[("agent.py", 12)][1:] == ("required", ("R1",))
