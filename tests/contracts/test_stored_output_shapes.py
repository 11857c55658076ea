"""Held out, the stores round: a model's answer kept on an object's attribute by one method and read
by the code that called it, which acts on it.

Written from what real agents do (an adapter whose ``invoke_llm`` asks the model and keeps the reply's
tool call in ``self.tool_call``; the agent loop drives the adapter, then reads ``adapter.tool_call``
and executes it); the repositories themselves stay out of this repository, only their hand labels
are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

BASE = """\
from abc import ABC, abstractmethod


class Adapter(ABC):
    def __init__(self, client):
        self.client = client
        self.tool_call = None
        self.usage = 0

    @abstractmethod
    async def invoke_llm(self, request: dict):
        raise NotImplementedError
"""

REQUEST = """\
from app.adapters.base import Adapter


class RequestAdapter(Adapter):
    async def invoke_llm(self, request: dict):
        response = await self.client.chat.completions.create(**request)
        self.usage = response.usage.total_tokens
        if response.choices[0].message.tool_calls:
            self.tool_call = response.choices[0].message.tool_calls[0]
        else:
            self.tool_call = None
        yield None
"""

AGENT = """\
import subprocess

from openai import AsyncOpenAI

from app.adapters.base import Adapter
from app.adapters.request import RequestAdapter


class Agent:
    async def run(self, request: dict):
        adapter = RequestAdapter(AsyncOpenAI())
        await self._step(adapter, request)

    async def _step(self, adapter: Adapter, request: dict):
        invocation = adapter.invoke_llm(request)
        async for _chunk in invocation:
            pass
        if adapter.tool_call is None:
            return
        self._execute(adapter.tool_call)

    def _execute(self, tool_call):
        subprocess.run(tool_call.function.arguments, shell=True)
"""

SHOWN = """\
from openai import AsyncOpenAI

from app.adapters.base import Adapter
from app.adapters.request import RequestAdapter


class Agent:
    async def run(self, request: dict):
        adapter = RequestAdapter(AsyncOpenAI())
        await self._step(adapter, request)

    async def _step(self, adapter: Adapter, request: dict):
        async for _chunk in adapter.invoke_llm(request):
            pass
        print(adapter.usage)
"""


def _files(agent: str) -> dict[str, str]:
    return {
        "app/__init__.py": "", "app/adapters/__init__.py": "", "app/adapters/base.py": BASE,
        "app/adapters/request.py": REQUEST, "app/agent.py": agent,
    }  # fmt: skip


def test_a_tool_call_an_adapter_keeps_on_itself_and_the_agent_executes_is_followed_to_the_action(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, _files(AGENT))
    # The adapter's own request: its tool call is executed by the agent that drove it.
    assert calls[("app/adapters/request.py", 6)] == ("chat.completions.create", "required")


def test_the_call_of_a_method_keeping_the_answer_is_a_call_where_its_caller_reads_what_was_kept(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, _files(AGENT))
    # The agent's call of the adapter is where the answer comes back (in adapter.tool_call): a call of its own.
    assert calls[("app/agent.py", 15)] == ("RequestAdapter.invoke_llm", "required")


def test_an_adapter_whose_caller_reads_only_other_attributes_is_no_wrapper(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, _files(SHOWN))
    # The agent reads the token count only: the kept tool call is never used, nothing to follow.
    assert calls[("app/adapters/request.py", 6)][1] == "autonomous"
    # Nor is the agent's call of it a call: it returns none of the answer, and what it kept is not read.
    assert ("app/agent.py", 13) not in calls


TWICE = """\
import subprocess

from openai import AsyncOpenAI

from app.adapters.request import RequestAdapter


class Agent:
    async def run(self, draft: dict, final: dict):
        adapter = RequestAdapter(AsyncOpenAI())
        async for _chunk in adapter.invoke_llm(draft):
            pass
        async for _chunk in adapter.invoke_llm(final):
            pass
        subprocess.run(adapter.tool_call.function.arguments, shell=True)
"""


def test_what_was_kept_is_read_from_the_last_call_that_kept_it(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, _files(TWICE))
    # The second request keeps its own tool call over the first one's: the command run is the second's.
    assert ("app/agent.py", 11) not in calls
    assert calls[("app/agent.py", 13)] == ("RequestAdapter.invoke_llm", "required")
