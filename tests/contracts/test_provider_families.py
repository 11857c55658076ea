"""Held out recall 2: model providers a receiver the scan cannot type holds.

Written from what real agent platforms do (a class per provider, each with the same
method, handed to the agents untyped or picked from a table at run time; a provider's
call run in a thread pool); the repositories themselves stay out of this repository,
only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes


PROVIDERS = {
    "llms/openai_llm.py": """\
from openai import OpenAI


class OpenAiLlm:
    def __init__(self):
        self.client = OpenAI()

    def chat_completion(self, messages):
        response = self.client.chat.completions.create(model="gpt-4o", messages=messages)
        return {"content": response.choices[0].message.content}
""",
    "llms/claude_llm.py": """\
from anthropic import Anthropic


class ClaudeLlm:
    def __init__(self):
        self.client = Anthropic()

    def chat_completion(self, messages):
        message = self.client.messages.create(model="claude-3-5-sonnet-latest", max_tokens=1024, messages=messages)
        return {"content": message.content[0].text}
""",
}

STEP = """\
import subprocess


class StepHandler:
    def __init__(self, model, runner):
        self.model = model
        self.runner = runner

    def step(self, messages):
        response = self.model.chat_completion(messages)
        subprocess.run(response["content"], shell=True)

    def other(self, messages):
        response = self.runner.chat_completion(messages)
        subprocess.run(response["content"], shell=True)
"""


def test_an_untyped_receiver_named_for_a_model_holds_one_of_the_project_providers(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {**PROVIDERS, "agent/step.py": STEP})
    # self.model, given to the constructor untyped, calls the method two provider classes implement:
    # the call site is a model call, and its shell command makes both provider calls required.
    assert calls[("agent/step.py", 10)] == ("model.chat_completion", "required")
    assert calls[("llms/openai_llm.py", 9)][1] == "required"
    assert calls[("llms/claude_llm.py", 9)][1] == "required"
    # self.runner is not named for a model: the same method on it is not read as a provider's.
    assert ("agent/step.py", 14) not in calls


# A second class of the project with a chat_completion that asks no model: the wrapper's is not the only def
# of the name (call_match.only_implemented), so only the family rule could read self.model's call as a provider's.
_NOT_A_PROVIDER = """\
class Echo:
    def chat_completion(self, messages):
        return {"content": messages[-1]["content"]}
"""


def test_one_provider_class_alone_is_no_family(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {
        "llms/openai_llm.py": PROVIDERS["llms/openai_llm.py"], "llms/echo.py": _NOT_A_PROVIDER, "agent/step.py": STEP,
    })  # fmt: skip
    assert ("agent/step.py", 10) not in calls


DISPATCH = """\
import concurrent.futures

from llms.claude_llm import ClaudeLlm
from llms.openai_llm import OpenAiLlm


class LLM:
    def inference(self, messages):
        mapping = {"CLAUDE": ClaudeLlm(), "OPENAI": OpenAiLlm()}
        model = mapping["OPENAI"]
        with concurrent.futures.ThreadPoolExecutor() as executor:
            future = executor.submit(model.chat_completion, messages)
            response = future.result(timeout=30)
        return response["content"]
"""

CODER = """\
from pathlib import Path

from llms.dispatch import LLM


class Coder:
    def __init__(self):
        self.llm = LLM()

    def execute(self, prompt):
        code = self.llm.inference(prompt)
        Path("main.py").write_text(code)
"""


def test_a_provider_picked_from_a_table_and_run_in_a_thread_pool_is_asked_there(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {**PROVIDERS, "llms/dispatch.py": DISPATCH, "agents/coder.py": CODER})
    # executor.submit(model.chat_completion, ...) runs the provider's call; its future's result is the
    # answer, so LLM.inference returns it and the coder's call of it is a model call too.
    assert calls[("llms/dispatch.py", 12)][0] == "model.chat_completion"
    assert calls[("agents/coder.py", 11)][0] == "LLM.inference"


SUMMARY_PROMPT = """\
from openai import OpenAI

client = OpenAI()


def summarise(past):
    response = client.chat.completions.create(model="gpt-4o", messages=past)
    return response.choices[0].message.content


def build_messages(prompt, past, question):
    messages = [{"role": "system", "content": prompt}]
    summary = summarise(past)
    messages.append({"role": "assistant", "content": summary})
    messages.append({"role": "user", "content": question})
    return messages


def conversation(prompt, past):
    messages = [{"role": "system", "content": prompt}]
    answer = summarise(past)
    messages.append({"role": "assistant", "content": answer})
    return messages


def step(prompt, past, question):
    built = build_messages(prompt, past, question)
    kept = conversation(prompt, past)
    return built, kept
"""


def test_a_prompt_built_around_an_earlier_answer_is_not_the_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {"builder.py": SUMMARY_PROMPT})
    # The summary goes into the next prompt, a user's question after it: build_messages returns a
    # prompt, so its call site is no model call. The conversation returned with the answer appended
    # last still holds the answer: its call site is one.
    assert ("builder.py", 27) not in calls
    assert calls[("builder.py", 28)][0] == "conversation"



NESTED = """\
import subprocess

import requests


def stream(prompt):
    def _open_response():
        resp = requests.post("https://api.openai.com/v1/responses", json={"model": "gpt-4o", "input": prompt})
        if resp.status_code != 200:
            raise ValueError(resp.text)
        return resp

    def _events():
        response = _open_response()
        for line in response.iter_lines():
            yield line

    for command in _events():
        subprocess.run(command, shell=True)
"""


def test_a_wrapper_nested_in_a_function_is_called_by_its_siblings(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {"stream.py": NESTED})
    # _open_response, nested in stream(), returns the model's response: _events' call of it is a
    # model call, and the commands its lines become make both required.
    assert calls[("stream.py", 14)] == ("_open_response", "required")
    assert calls[("stream.py", 8)][1] == "required"


TOOLS = {
    "tools/base_tool.py": """\
import logging


class BaseTool:
    name = "tool"

    def _execute(self, task):
        raise NotImplementedError

    def execute(self, task):
        logging.info("running %s", self.name)
        return self._execute(task)
""",
    "tools/code_tool.py": """\
from openai import OpenAI

from tools.base_tool import BaseTool

client = OpenAI()


class CodeTool(BaseTool):
    def _execute(self, task):
        response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
        return response.choices[0].message.content
""",
    "tools/mail_tool.py": """\
import smtplib

from tools.base_tool import BaseTool


class MailTool(BaseTool):
    def _execute(self, task):
        smtplib.SMTP("localhost").sendmail("a@example.com", ["b@example.com"], task)
        return "sent"


class SearchTool(BaseTool):
    def _execute(self, task):
        return "results for " + task
""",
    "agent/executor.py": """\
import logging


class ToolExecutor:
    def __init__(self, tools):
        self.tools = tools

    def run(self, name, args):
        tool = {t.name: t for t in self.tools}[name]
        return tool.execute(args)
""",
}


def test_one_tool_in_three_asking_a_model_does_not_make_every_tool_a_model_call(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, TOOLS)
    # CodeTool's _execute asks a model, MailTool's and SearchTool's do not: BaseTool.execute is not a
    # wrapper for it, so the executor's tool.execute(args) (any of the three) is no model call.
    assert list(calls) == [("tools/code_tool.py", 10)]


INHERITED = {
    "interp/core.py": """\
import litellm


class OpenInterpreter:
    def chat(self, message):
        response = litellm.completion(model="gpt-4o", messages=[{"role": "user", "content": message}])
        return response.choices[0].message.content
""",
    "interp/async_core.py": """\
from interp.core import OpenInterpreter


class AsyncInterpreter(OpenInterpreter):
    def respond(self, message):
        self.output = self.chat(message)
""",
    "interp/server.py": """\
import subprocess


def create_router(async_interpreter):
    def run(message):
        code = async_interpreter.chat(message)
        subprocess.run(code, shell=True)

    return run
""",
}


def test_a_subclass_instance_calls_the_wrapper_methods_its_base_of_another_module_has(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, INHERITED)
    # async_interpreter, named after AsyncInterpreter, calls chat() it inherits from OpenInterpreter:
    # a call site of the base's wrapper.
    assert calls[("interp/server.py", 6)] == ("OpenInterpreter.chat", "required")


def test_a_subclass_name_two_modules_define_still_inherits_its_base_s_wrappers(tmp_path: Path) -> None:
    archived = {"interp/archived_async.py": INHERITED["interp/async_core.py"].replace("self.output", "self.last")}
    calls = scan_modes(tmp_path, {**INHERITED, **archived})
    # AsyncInterpreter is defined twice (an archived copy): each module's class still inherits chat().
    assert calls[("interp/server.py", 6)] == ("OpenInterpreter.chat", "required")


PRINTED = {
    "sg/printer.py": """\
from rich.console import Console


class Printer:
    console = Console()

    def __call__(self, chunks, live=True):
        full_completion = "".join(chunks)
        self.console.print(full_completion)
        return full_completion
""",
    "sg/handler.py": """\
from openai import OpenAI

from sg.printer import Printer

client = OpenAI()


class Handler:
    @property
    def printer(self) -> Printer:
        return Printer()

    def get_completion(self, messages):
        for chunk in client.chat.completions.create(model="gpt-4o", messages=messages, stream=True):
            yield chunk.choices[0].delta.content or ""

    def handle(self, prompt):
        generator = self.get_completion([{"role": "user", "content": prompt}])
        return self.printer(generator)
""",
    "sg/app.py": """\
import subprocess

from sg.handler import Handler


def main(prompt):
    command = Handler().handle(prompt)
    subprocess.run(command, shell=True)
""",
}


def test_the_stream_handed_to_a_property_s_printer_that_joins_it_is_still_the_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, PRINTED)
    # handle() returns self.printer(generator): printer is a property returning a Printer of another
    # module, whose __call__ joins the chunks and returns them. handle is a wrapper; main runs its answer.
    assert calls[("sg/app.py", 7)] == ("Handler.handle", "required")


ALIASED = {
    "pkg/__init__.py": "",
    "pkg/sub.py": """\
from openai import OpenAI

client = OpenAI()


def chat(messages):
    response = client.chat.completions.create(model="gpt-4o", messages=messages)
    return response.choices[0].message.content
""",
    "pkg/main.py": """\
import subprocess


def reply(messages, provider):
    if provider == "sub":
        from .sub import chat as chat_subscription

        content = chat_subscription(messages)
        subprocess.run(content, shell=True)
""",
}


def test_a_wrapper_imported_under_another_name_in_a_function_is_called_by_that_name(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, ALIASED)
    # main.py never writes chat( nor imports an SDK: its import of chat as chat_subscription brings it in.
    assert calls[("pkg/main.py", 8)] == ("chat", "required")
