"""Held out, the objects round: an answer that reaches the code it becomes through an object, not a
return value.

Written from what real agents do (a code generator writing its answer into the post object its
caller passed in, which the caller then hands to a Jupyter kernel); the repositories themselves
stay out of this repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

KERNEL = """\
from jupyter_client.blocking.client import BlockingKernelClient


class Environment:
    def __init__(self):
        self.clients = {}

    def _get_client(self, session_id: str) -> BlockingKernelClient:
        return self.clients[session_id]

    def execute_code(self, session_id: str, code: str) -> str:
        return self._execute_code_on_kernel(session_id, code=code)

    def _execute_code_on_kernel(self, session_id: str, code: str) -> str:
        kc = self._get_client(session_id)
        return kc.execute(code=code, silent=False)
"""


def test_code_run_in_a_jupyter_kernel_client_is_code_execution(tmp_path: Path) -> None:
    agent = """\
from openai import OpenAI

from app.env import Environment


def run(task: str) -> str:
    reply = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    return Environment().execute_code("s1", reply.choices[0].message.content)
"""
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/env.py": KERNEL, "app/agent.py": agent})
    assert calls[("app/agent.py", 7)] == ("chat.completions.create", "required")
