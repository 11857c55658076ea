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
