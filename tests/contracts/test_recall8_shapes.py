"""Shapes of model calls the recall 8 round found the scan missing in held-out repositories, each a small project.

Written from what real agent code does (vision-agent's planner returning ``cast(str, response)``, a
project's model wrapper run in a thread or an executor: swarms' ``Agent.arun`` returning
``await asyncio.to_thread(self.run, ...)``, browser-use's OCI client running its blocking request with
``loop.run_in_executor(None, _sync_request)``); the repositories themselves stay out of this repository,
only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

_PLANNER = """\
import typing
from typing import cast

from openai import OpenAI

client = OpenAI()


def run_planning(chat):
    response = client.chat.completions.create(model="gpt-4o", messages=chat)
    return cast(str, response.choices[0].message.content)


def run_critic(chat):
    thoughts = client.chat.completions.create(model="gpt-4o", messages=chat).choices[0].message.content
    return typing.cast(str, thoughts)
"""

_RUNNER = """\
import subprocess

from pkg.planner import run_critic, run_planning


def step(chat):
    code = run_planning(chat)
    subprocess.run(["python", "-c", code])
    print(run_critic(chat))
"""


def test_a_value_cast_for_the_type_checker_is_the_answer_still(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"pkg/__init__.py": "", "pkg/planner.py": _PLANNER, "pkg/runner.py": _RUNNER})
    # typing.cast(str, answer) changes nothing at run time: the functions returning it are wrappers, and
    # the code run with the first one's answer makes the call inside it required.
    assert calls[("pkg/runner.py", 7)][:2] == ("run_planning", "required")
    assert calls[("pkg/planner.py", 10)][1] == "required"
    assert calls[("pkg/runner.py", 9)][:2] == ("run_critic", "autonomous")
