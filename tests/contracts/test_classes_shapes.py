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
