"""Shapes the example apps a first-time user copies showed the scan missing or misjudging.

Written from collections of small apps (a framework's cookbook, a course's agents), each
app in its own folder with its own helper modules of the same names; the repositories
themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls


def _llm(sdk: str) -> str:
    return f"""\
from {sdk} import OpenAI

def ask(prompt):
    r = OpenAI().chat.completions.create(model="gpt-4o", messages=[{{"role": "user", "content": prompt}}])
    return r.choices[0].message.content
"""


SHELL_APP = """\
import subprocess
from shell_app.llm import ask

def step(task):
    command = ask(task)
    subprocess.run(command, shell=True)
"""

CHAT_APP = """\
from chat_app.llm import ask

def reply(question):
    print(ask(question))
"""


def test_a_wrappers_call_sites_count_only_for_the_wrapper_they_import(tmp_path: Path) -> None:
    # Two apps, each with its own llm.ask: the shell app's use of its answer is its wrapper's evidence,
    # not the chat app's, whose answer is only printed.
    calls = scan_calls(tmp_path, {
        "shell_app/llm.py": _llm("openai"), "shell_app/main.py": SHELL_APP,
        "chat_app/llm.py": _llm("openai"), "chat_app/main.py": CHAT_APP,
    })  # fmt: skip
    assert calls[("shell_app/llm.py", 4)][1] == "required"
    assert calls[("chat_app/llm.py", 4)][1] == "autonomous"

