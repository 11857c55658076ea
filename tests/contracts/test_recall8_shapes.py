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


_AGENT = """\
import asyncio
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from openai import OpenAI

client = OpenAI()


class Agent:
    def __init__(self):
        self.executor = ThreadPoolExecutor(max_workers=2)

    def sync_request(self, prompt):
        response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content

    async def request(self, prompt):
        loop = asyncio.get_event_loop()
        return await loop.run_in_executor(self.executor, self.sync_request, prompt)

    async def arun(self, prompt):
        return await asyncio.to_thread(self.sync_request, prompt)

    async def arun_partial(self, prompt):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, partial(self.sync_request, prompt))

    def run_one(self, prompt):
        future = self.executor.submit(self.sync_request, prompt)
        return future.result()

    async def nested(self, prompt):
        def _blocking():
            response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
            return response.choices[0].message.content

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, _blocking)
"""

_MAIN = """\
import subprocess

from pkg.agent import Agent


class Coder(Agent):
    async def step(self):
        command = await self.request("the next shell command")
        subprocess.run(command, shell=True)


async def chat(agent: Agent):
    print(await agent.arun("hello"))
"""


def test_a_wrapper_run_in_a_thread_or_an_executor_is_a_call_site(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"pkg/__init__.py": "", "pkg/agent.py": _AGENT, "pkg/main.py": _MAIN})
    # The thread or executor call that runs the wrapper is its call site, named for the wrapper.
    assert calls[("pkg/agent.py", 20)][0] == "Agent.sync_request"
    assert calls[("pkg/agent.py", 23)][0] == "Agent.sync_request"
    assert calls[("pkg/agent.py", 27)][0] == "Agent.sync_request"
    assert calls[("pkg/agent.py", 30)][0] == "Agent.sync_request"
    assert calls[("pkg/agent.py", 39)][0] == "Agent.nested._blocking"
    # The function returning what the executor hands back is a wrapper too: a subclass in another module
    # asking through it runs the answer as a shell command, which the call inside takes as its evidence.
    assert calls[("pkg/main.py", 8)][:2] == ("Agent.request", "required")
    assert calls[("pkg/agent.py", 15)][1] == "required"
    assert calls[("pkg/main.py", 13)][:2] == ("Agent.arun", "autonomous")


_FORMS = """\
from concurrent.futures import ThreadPoolExecutor


def submit_form(form):
    return form


class Page:
    def __init__(self):
        self.executor = ThreadPoolExecutor(max_workers=2)

    def fill(self, form):
        return self.executor.submit(submit_form, form)
"""


def test_an_executor_running_a_function_that_asks_no_model_is_no_call(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"pkg/__init__.py": "", "pkg/forms.py": _FORMS})
    assert calls == {}


_GRADIO = """\
import gradio as gr
from openai import OpenAI

client = OpenAI()


class Chat:
    def respond(self, message):
        response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": message}])
        return response.choices[0].message.content

    def launch(self):
        with gr.Blocks() as demo:
            msg = gr.Textbox()
            out = gr.Textbox()
            msg.submit(self.respond, inputs=[msg], outputs=[out])
        demo.launch()
"""


def test_a_widget_submit_registering_a_wrapper_is_no_call_site(tmp_path: Path) -> None:
    # RepoAgent's Gradio page: msg.submit(self.wrapper_respond, ...) registers the handler the page calls on
    # Enter; only an executor's submit (executor, pool, self._executor) runs the function it is given.
    calls = scan_calls(tmp_path, {"pkg/__init__.py": "", "pkg/chat.py": _GRADIO})
    assert ("pkg/chat.py", 16) not in calls
    assert ("pkg/chat.py", 9) in calls
