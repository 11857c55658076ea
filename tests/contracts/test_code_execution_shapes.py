"""Held out, the code-execution round: calls whose answer becomes code or commands that run,
reached through shapes the flow had lost.

Written from what real coding and computer-use agents do (an agent base class handing out a
closure around its provider client, whose callers run the reply as shell commands); the
repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes
from tests.contracts.test_handed_out import AGENTS, CLIENTS


def test_what_is_handed_out_gives_its_callers_evidence_back_to_the_calls_inside(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {**CLIENTS, **AGENTS})
    # Executor runs what llm = self.get_llm(); await llm([task]) returns as a shell command: the closure's
    # call of llm_client, BaseLLMClient.__call__'s call of _make_request and each provider's request are
    # where a guard can sit, and are required like the executor's call.
    assert calls[("core/agents/executor.py", 9)] == ("BaseAgent.get_llm()", "required")
    assert calls[("core/agents/base.py", 13)] == ("BaseLLMClient.__call__", "required")
    assert calls[("core/llm/base.py", 9)] == ("BaseLLMClient._make_request", "required")
    assert calls[("core/llm/openai_client.py", 9)] == ("chat.completions.create", "required")
    assert calls[("core/llm/anthropic_client.py", 9)] == ("messages.create", "required")
    # api_check's own call of the client is checked and dropped: nothing runs.
    assert calls[("core/llm/base.py", 15)] == ("BaseLLMClient.__call__", "autonomous")


CODE_AGENT = {
    "agents/__init__.py": "",
    "agents/code_agent.py": """\
from openai import OpenAI


class CodeAgent:
    def __init__(self, model):
        self.client = OpenAI()
        self.model = model

    def execute(self, task, env_controller):
        response = self.client.chat.completions.create(model=self.model, messages=[{"role": "user", "content": task}])
        code = response.choices[0].message.content
        return env_controller.run_bash_script(code)
""",
    "agents/local_env.py": """\
import subprocess


class LocalController:
    def run_bash_script(self, code, timeout=30):
        proc = subprocess.run(["/bin/bash", "-lc", code], capture_output=True, text=True, timeout=timeout)
        return proc.stdout
""",
}


def test_a_method_named_for_running_code_on_an_untyped_receiver_is_judged_by_the_project_s_methods_of_that_name(
    tmp_path: Path,
) -> None:
    calls = scan_modes(tmp_path, CODE_AGENT)
    # env_controller is a parameter nothing types: run_bash_script's name alone counted as reviewed; the
    # project's one class with that method starts bash on it, so the code runs: required.
    assert calls[("agents/code_agent.py", 10)] == ("chat.completions.create", "required")


def test_a_method_named_for_running_code_that_no_project_class_defines_stays_a_name_only_signal(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {"agents/__init__.py": "", "agents/code_agent.py": CODE_AGENT["agents/code_agent.py"]})
    assert calls[("agents/code_agent.py", 10)] == ("chat.completions.create", "reviewed")


ASYNC_RUNNER = {
    "runner.py": """\
import asyncio

from openai import AsyncOpenAI


async def fix(task):
    client = AsyncOpenAI()
    response = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    process = await asyncio.create_subprocess_shell(response.choices[0].message.content)
    await process.wait()


async def fix_exec(task):
    client = AsyncOpenAI()
    response = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    await asyncio.create_subprocess_exec("bash", "-c", response.choices[0].message.content)


async def wait_a_bit(task):
    client = AsyncOpenAI()
    response = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    await asyncio.sleep(float(response.choices[0].message.content))
""",
}


def test_asyncio_s_subprocess_functions_run_the_answer_as_a_command(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, ASYNC_RUNNER)
    # asyncio's scheduling decides nothing, but create_subprocess_shell/exec start a process on the answer.
    assert calls[("runner.py", 8)] == ("chat.completions.create", "required")
    assert calls[("runner.py", 15)] == ("chat.completions.create", "required")
    assert calls[("runner.py", 21)] == ("chat.completions.create", "autonomous")


PROCESSES = {
    "core/__init__.py": "",
    "core/agents/__init__.py": "",
    "core/agents/frontend.py": """\
from openai import AsyncOpenAI


class Frontend:
    def __init__(self, process_manager):
        self.process_manager = process_manager
        self.client = AsyncOpenAI()

    async def step(self, task):
        response = await self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
        await self.process_response(response.choices[0].message.content)

    async def process_response(self, text):
        for block in text.split("```"):
            if block.startswith("command:"):
                await self.process_manager.run_command(block.removeprefix("command:"))
""",
    "core/proc/__init__.py": "",
    "core/proc/process_manager.py": """\
import asyncio


class LocalProcess:
    def __init__(self, process):
        self.process = process

    @staticmethod
    def describe(cmd):
        return f"$ {cmd}"

    @staticmethod
    async def start(cmd, *, cwd="."):
        _process = await asyncio.create_subprocess_shell(cmd, cwd=cwd)
        return LocalProcess(_process)


class ProcessManager:
    async def start_process(self, cmd, *, cwd="."):
        print(LocalProcess.describe(cmd))
        return await LocalProcess.start(cmd, cwd=cwd)

    async def run_command(self, cmd, *, cwd="."):
        process = await self.start_process(cmd, cwd=cwd)
        return await process.process.wait()
""",
}


def test_a_static_method_called_by_its_class_s_name_is_followed_into(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, PROCESSES)
    # run_command -> self.start_process -> LocalProcess.start, a static method called by its class's name in
    # its own module, starts a shell on the command: the frontend's reply runs (LocalProcess.describe only
    # formats it).
    assert calls[("core/agents/frontend.py", 10)] == ("chat.completions.create", "required")


ENGINES = {
    "core/__init__.py": "",
    "core/engine.py": """\
from anthropic import Anthropic
from openai import OpenAI


class LMMEngine:
    pass


class LMMEngineOpenAI(LMMEngine):
    def generate(self, messages):
        response = OpenAI().chat.completions.create(model="gpt-4o", messages=messages)
        return response.choices[0].message.content


class LMMEngineAnthropic(LMMEngine):
    def generate(self, messages):
        response = Anthropic().messages.create(model="claude-sonnet-4-0", max_tokens=1024, messages=messages)
        return response.content[0].text
""",
    "core/mllm.py": """\
from core.engine import LMMEngineAnthropic, LMMEngineOpenAI


class LMMAgent:
    def __init__(self, engine_type):
        if engine_type == "openai":
            self.engine = LMMEngineOpenAI()
        elif engine_type == "anthropic":
            self.engine = LMMEngineAnthropic()
        self.messages = []

    def get_response(self):
        return self.engine.generate(self.messages)
""",
    "agent.py": """\
from core.mllm import LMMAgent


def act(engine_type):
    plan = LMMAgent(engine_type).get_response()
    exec(plan)
""",
}


def test_an_attribute_bound_to_one_of_several_wrapper_classes_in_branches_calls_whichever_was_built(
    tmp_path: Path,
) -> None:
    calls = scan_modes(tmp_path, ENGINES)
    # The plan is exec()'d; self.engine is an OpenAI engine or an Anthropic one, so both engines' requests
    # are where a guard can sit, not only the first one bound.
    assert calls[("agent.py", 5)] == ("LMMAgent.get_response", "required")
    assert calls[("core/engine.py", 11)] == ("chat.completions.create", "required")
    assert calls[("core/engine.py", 17)] == ("messages.create", "required")


PUBLISHER = {
    "tools/__init__.py": "",
    "tools/describe.py": """\
from openai import OpenAI


class Describer:
    def __init__(self, git_provider):
        self.git_provider = git_provider

    def run(self, diff):
        response = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": diff}])
        self.git_provider.publish_comment(response.choices[0].message.content)
""",
    "providers/__init__.py": "",
    "providers/gerrit.py": """\
import subprocess


class GerritProvider:
    def publish_comment(self, text):
        subprocess.run(["ssh", "gerrit.example", "gerrit", "review", "-m", text], check=True)
""",
}


def test_a_method_named_for_sending_is_not_made_code_execution_by_a_fixed_command_it_passes_the_text_to(
    tmp_path: Path,
) -> None:
    calls = scan_modes(tmp_path, PUBLISHER)
    # publish_comment says a message is posted; one provider posts it through ssh with the text as an
    # argument of a fixed command: that confirms nothing of the name, and the text is not run as code.
    assert calls[("tools/describe.py", 9)][1] != "required"
