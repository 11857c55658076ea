"""Held out, the flow round: where an answer goes after an object holding it takes it.

Written from what real agents do (an agent loop keeping another model's answer in its conversation
object, ``chat.append_assistant_message(text)``, then asking the model again through that object,
``chat.generate(...)``); the repositories themselves stay out of this repository, only their hand
labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

CONVERSATION = """\
from openai import AsyncOpenAI


class Conversation:
    def __init__(self):
        self._client = AsyncOpenAI()
        self._messages = []

    def append_assistant_message(self, text):
        self._messages.append({"role": "assistant", "content": text})

    def last(self):
        return self._messages[-1]["content"]

    async def generate(self, new_input):
        response = await self._ask(self._messages + new_input)
        text = response.choices[0].message.content
        self._messages.append({"role": "assistant", "content": text})
        return text

    async def _ask(self, messages):
        return await self._client.chat.completions.create(model="gpt-4o", messages=messages)
"""

AGENT = """\
import subprocess

from app.chat import Conversation


class Agent:
    def __init__(self):
        self._chat: Conversation | None = None

    async def run(self, task, earlier_answer):
        self._chat = Conversation()
        chat = self._chat
        chat.append_assistant_message(earlier_answer)
        reply = await chat.generate([{"role": "user", "content": task}])
        subprocess.run(reply, shell=True)
"""

SURFER = """\
from openai import AsyncOpenAI

from app.agent import Agent

client = AsyncOpenAI()


async def browse(task):
    response = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    answer = response.choices[0].message.content
    await Agent().run(task, answer)
"""


def test_an_answer_kept_in_a_conversation_that_then_asks_the_model_is_context_not_the_next_answer(tmp_path: Path) -> None:
    files = {"app/__init__.py": "", "app/chat.py": CONVERSATION, "app/agent.py": AGENT, "app/surfer.py": SURFER}
    calls = scan_modes(tmp_path, files)
    # The surfer's answer is history in the agent's conversation: the shell runs the agent's own next answer.
    assert calls[("app/surfer.py", 9)] == ("chat.completions.create", "autonomous")
    assert calls[("app/agent.py", 14)] == ("Conversation.generate", "required")


def test_an_answer_read_back_from_the_conversation_holding_it_is_the_answer_still(tmp_path: Path) -> None:
    agent = AGENT.replace(
        '        reply = await chat.generate([{"role": "user", "content": task}])\n', "        reply = chat.last()\n"
    )
    files = {"app/__init__.py": "", "app/chat.py": CONVERSATION, "app/agent.py": agent, "app/surfer.py": SURFER}
    # last() asks no model: what it returns is what the conversation holds, the surfer's answer, run in a shell.
    assert scan_modes(tmp_path, files)[("app/surfer.py", 9)] == ("chat.completions.create", "required")


def test_the_same_in_one_module(tmp_path: Path) -> None:
    surfer = """\
import subprocess

from openai import AsyncOpenAI

client = AsyncOpenAI()


class Conversation:
    def __init__(self):
        self._messages = []

    def append_assistant_message(self, text):
        self._messages.append({"role": "assistant", "content": text})

    async def generate(self, task):
        response = await client.chat.completions.create(model="gpt-4o", messages=self._messages + [task])
        return response.choices[0].message.content


async def browse(task):
    response = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    chat = Conversation()
    chat.append_assistant_message(response.choices[0].message.content)
    reply = await chat.generate({"role": "user", "content": task})
    subprocess.run(reply, shell=True)
"""
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/surfer.py": surfer})
    assert calls[("app/surfer.py", 21)] == ("chat.completions.create", "autonomous")
    assert calls[("app/surfer.py", 24)] == ("Conversation.generate", "required")


STREAMING_CONVERSATION = """\
from openai import AsyncOpenAI


class Conversation:
    def __init__(self):
        self._client = AsyncOpenAI()
        self._messages = []

    async def generate_streaming(self, new_input):
        prompt = self._messages + new_input
        yield ("state", "calling")
        response = await self._client.chat.completions.create(model="gpt-4o", messages=prompt)
        text = response.choices[0].message.content
        self._messages.extend(new_input)
        yield ("result", text)
"""

PENDING_AGENT = """\
import subprocess

from app.chat import Conversation


class Agent:
    def __init__(self):
        self._chat = Conversation()

    async def run(self, task, earlier_answer):
        pending = [{"role": "user", "content": task}]
        pending.append({"role": "assistant", "content": earlier_answer})
        reply = ""
        async for kind, payload in self._chat.generate_streaming(pending):
            if kind == "result":
                reply = payload
        subprocess.run(reply, shell=True)
"""


def test_an_answer_handed_to_a_method_that_asks_the_model_with_it_is_part_of_the_next_prompt(tmp_path: Path) -> None:
    # generate_streaming yields tagged events, so it is no wrapper the scan knows; it asks the model with
    # the pending messages all the same: what it yields is the model's next answer, not the surfer's.
    files = {"app/__init__.py": "", "app/chat.py": STREAMING_CONVERSATION, "app/agent.py": PENDING_AGENT, "app/surfer.py": SURFER}
    assert scan_modes(tmp_path, files)[("app/surfer.py", 9)] == ("chat.completions.create", "autonomous")
