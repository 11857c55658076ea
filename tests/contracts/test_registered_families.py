"""The runner round: answers returned to a runner that picks the answering class from a registry.

Written from what real computer-use SDKs do (each agent loop class registered with a project
decorator, ``@register_agent(models=...)``; the runner finds the class for the model name, builds it
and hands the instance, untyped, to a helper that awaits its ``predict_step``; the answer's actions
are then run); the repositories themselves stay out of this repository, only their hand labels are
kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

DECORATORS = """\
_configs = []


def register_agent(models, priority=0):
    def decorator(agent_class):
        _configs.append((models, priority, agent_class))
        return agent_class

    return decorator


def find_agent_class(model):
    for models, _priority, agent_class in _configs:
        if model.startswith(models):
            return agent_class
    return None
"""

LOOPS = {
    "sdk/loops/openai_loop.py": """\
from openai import AsyncOpenAI

from ..decorators import register_agent


@register_agent(models="gpt-")
class OpenAILoop:
    def __init__(self):
        self.client = AsyncOpenAI()

    async def predict_step(self, messages):
        response = await self.client.chat.completions.create(model="gpt-4o", messages=messages)
        return response.choices[0].message.content
""",
    "sdk/loops/claude_loop.py": """\
from anthropic import AsyncAnthropic

from ..decorators import register_agent


@register_agent(models="claude-")
class ClaudeLoop:
    def __init__(self):
        self.client = AsyncAnthropic()

    async def predict_step(self, messages):
        message = await self.client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=messages)
        return message.content[0].text
""",
}

RUNNER = """\
import subprocess

from .decorators import find_agent_class


async def _predict_with_retry(agent_loop, messages):
    return await agent_loop.predict_step(messages)


class Agent:
    def __init__(self, model):
        self.agent_loop = find_agent_class(model)()

    async def run(self, messages):
        command = await _predict_with_retry(self.agent_loop, messages)
        subprocess.run(command, shell=True)
"""

# Importing the loops registers them (the package's __init__ imports each module).
PACKAGE = {
    "sdk/__init__.py": "from . import loops\nfrom .agent import Agent\n",
    "sdk/loops/__init__.py": "from . import claude_loop, openai_loop\n",
    "sdk/decorators.py": DECORATORS,
}

UNREGISTERED = {
    path: source.replace('@register_agent(models="gpt-")\n', "").replace('@register_agent(models="claude-")\n', "")
    for path, source in LOOPS.items()
}


def test_a_registered_class_s_method_on_a_receiver_of_any_name_is_a_call_site(tmp_path: Path) -> None:
    files = {**PACKAGE, "sdk/agent.py": RUNNER, **LOOPS}
    calls = scan_modes(tmp_path, files)
    # agent_loop is named for no model, but predict_step is a wrapper of two classes one project decorator
    # registers: the runner's call is one of theirs, and its shell command makes both loops' calls required.
    assert calls[("sdk/agent.py", 7)] == ("agent_loop.predict_step", "required")
    assert calls[("sdk/loops/openai_loop.py", 12)][1] == "required"
    assert calls[("sdk/loops/claude_loop.py", 12)][1] == "required"


def test_the_same_classes_unregistered_are_no_family_for_a_receiver_named_for_no_model(tmp_path: Path) -> None:
    files = {**PACKAGE, "sdk/agent.py": RUNNER, **UNREGISTERED}
    calls = scan_modes(tmp_path, files)
    assert ("sdk/agent.py", 7) not in calls
    assert calls[("sdk/loops/openai_loop.py", 11)][1] != "required"
