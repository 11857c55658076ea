"""Held out, the overrate2 round: calls whose answer's path the scan sees but rated wrongly.

Written from what real desktop and coding agents do (a provider class behind a registry, asked
through a call helper, an agent's response method, a processor and a command layer, each in its
own module); the repositories themselves stay out of this repository, only their hand labels are
kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

# A wrapper chain seven modules long: the answer of the provider's request is handed up through
# six wrappers before the last module runs it as a shell command.
CHAIN = {
    "app/__init__.py": "",
    "app/provider.py": """\
from openai import OpenAI


def request(prompt):
    response = OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])
    return response.choices[0].message.content
""",
    "app/service.py": """\
from app.provider import request


def completion(prompt):
    return request(prompt)
""",
    "app/llm_call.py": """\
from app.service import completion


def get_completion(prompt):
    return completion(prompt)
""",
    "app/agent.py": """\
from app.llm_call import get_completion


def get_response(prompt):
    return get_completion(prompt)
""",
    "app/processor.py": """\
from app.agent import get_response


def next_action(task):
    return get_response(task)
""",
    "app/planner.py": """\
from app.processor import next_action


def plan(task):
    return next_action(task)
""",
    "app/runner.py": """\
import subprocess

from app.planner import plan


def run(task):
    command = plan(task)
    subprocess.run(command, shell=True)
""",
}


def test_what_the_last_of_seven_modules_does_with_the_answer_reaches_the_provider_s_call(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, CHAIN)
    # The runner runs the plan as a shell command: every wrapper on the way, and the SDK call where a
    # guard can sit, is required. Evidence was given back four modules deep: the provider's own call
    # (six wrappers below the runner) stayed autonomous, as UFO's OpenAI, Qwen, DeepSeek and Ollama
    # services did under llm_call.get_completions.
    assert calls[("app/runner.py", 7)] == ("plan", "required")
    assert calls[("app/agent.py", 5)] == ("get_completion", "required")
    assert calls[("app/service.py", 5)] == ("request", "required")
    assert calls[("app/provider.py", 5)] == ("chat.completions.create", "required")
