"""Held out, the precision round: calls the scan reported that ask no model.

Written from what real multi-agent frameworks do (a summary memory kept by one method and read by
another, a client built by a helper, an async wrapper called without ``await``); the repositories
themselves stay out of this repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

LLM = """\
from openai import OpenAI


class Chat:
    def generate_response(self, prompt):
        response = OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content
"""

# One method stores the answer in an attribute, another hands the attribute back: reading it asks
# no model. A method that calls the asking method first and then hands the attribute back does ask.
MEMORY = {
    "app/__init__.py": "",
    "app/llm.py": LLM,
    "app/memory.py": """\
import subprocess

from app.llm import Chat


class SummaryMemory:
    def __init__(self):
        self.llm = Chat()
        self.buffer = ""

    def update_buffer(self, new_lines):
        self.buffer = self.llm.generate_response(new_lines)

    def summarise(self, new_lines):
        self.update_buffer(new_lines)
        return self.buffer

    def to_string(self):
        return self.buffer

    def replay(self):
        subprocess.run(self.buffer, shell=True)

    def _refresh_all(self, lines):
        for line in lines:
            self.update_buffer(line)

    def refresh(self, lines):
        self._refresh_all(lines)
        return self.buffer
""",
    "app/agent.py": """\
from app.memory import SummaryMemory


class Agent:
    def __init__(self):
        self.memory = SummaryMemory()

    def prompt(self):
        return "History: " + self.memory.to_string()

    def fresh(self, lines):
        return self.memory.summarise(lines)

    def refreshed(self, lines):
        return self.memory.refresh(lines)
""",
}


def test_a_method_handing_back_an_attribute_another_method_filled_asks_no_model(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, MEMORY)
    # SummaryMemory.to_string (AgentVerse's, read by every simulation agent's prompt) returns what
    # update_buffer stored: no call site of it is a model call.
    assert ("app/agent.py", 9) not in calls
    # summarise asks through self.update_buffer before handing the attribute back: a wrapper.
    assert calls[("app/agent.py", 12)] == ("SummaryMemory.summarise", "autonomous")
    # refresh asks through another method of the class (swarms' run -> _run_autonomous_loop -> ... filling
    # the history it hands back formatted): a wrapper too.
    assert calls[("app/agent.py", 15)] == ("SummaryMemory.refresh", "autonomous")
    # What other methods do with the stored answer is still the call's evidence (replay runs it).
    assert calls[("app/memory.py", 12)] == ("Chat.generate_response", "required")


# A base class runs the actions the model picks; a subclass in another module overrides the runner so
# one new action asks the model about the page, and hands every other action to the base's own runner.
OVERRIDE = {
    "app/__init__.py": "",
    "app/surfer.py": """\
from openai import OpenAI


class Surfer:
    def __init__(self):
        self.client = OpenAI()

    def next_action(self, task):
        response = self.client.chat.completions.create(model="m", messages=[{"role": "user", "content": task}])
        return response.choices[0].message.content

    def execute(self, args):
        description = args.get("thoughts", "")
        return description

    def run(self, task):
        action = self.next_action(task)
        return self.execute({"thoughts": action})
""",
    "app/reader.py": """\
from openai import OpenAI

from app.surfer import Surfer


class ReadingSurfer(Surfer):
    def ask_page(self, question):
        response = OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": question}])
        return response.choices[0].message.content

    def execute(self, args):
        if args.get("action") == "read_page":
            return self.ask_page(args["question"])
        description = super().execute(args)
        return description
""",
}


def test_super_of_a_method_that_is_a_wrapper_only_through_its_overrides_asks_no_model(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, OVERRIDE)
    # self.execute(...) in the base runs whichever override the object has: ReadingSurfer's asks the model.
    assert ("app/surfer.py", 18) in calls
    assert calls[("app/reader.py", 13)][0] == "ReadingSurfer.ask_page"
    # super().execute(args) runs Surfer's own execute, which only hands back its argument's field
    # (magentic-ui's FaraQwen3NextAgent delegating to FaraQwen3Agent._execute_action).
    assert ("app/reader.py", 14) not in calls


# auto-code-rover's Ollama model loads itself with an empty request at setup, the answer dropped.
WARM_UP = {
    "app/__init__.py": "",
    "app/model.py": """\
import ollama


class OllamaModel:
    def __init__(self, name):
        self.name = name

    def setup(self):
        ollama.chat(model=self.name, messages=[])

    def check(self):
        reply = ollama.chat(model=self.name, messages=[])
        return reply

    def call(self, messages):
        response = ollama.chat(model=self.name, messages=messages)
        return response["message"]["content"]
""",
}


def test_a_request_asking_nothing_whose_answer_is_dropped_is_no_model_call(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, WARM_UP)
    assert ("app/model.py", 9) not in calls
    # The same empty request with its answer kept is still reported: what comes back is handed on.
    assert calls[("app/model.py", 12)] == ("ollama.chat", "autonomous")
    assert calls[("app/model.py", 16)] == ("ollama.chat", "autonomous")


# AgentVerse's ReflectionAgent.step (a plain def) calls the async twin of the model wrapper without
# await and hands the coroutine to its parser: the model is never asked.
COROUTINE = {
    "app/__init__.py": "",
    "app/base_llm.py": """\
from abc import abstractmethod

from pydantic import BaseModel


class BaseLLM(BaseModel):
    @abstractmethod
    def generate_response(self, prompt):
        pass

    @abstractmethod
    def agenerate_response(self, prompt):
        pass
""",
    "app/openai_llm.py": """\
from openai import AsyncOpenAI, OpenAI

from app.base_llm import BaseLLM


class Chat(BaseLLM):
    def generate_response(self, prompt):
        response = OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content

    async def agenerate_response(self, prompt):
        response = await AsyncOpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content
""",
    "app/base_agent.py": """\
from pydantic import BaseModel

from app.base_llm import BaseLLM


class BaseAgent(BaseModel):
    llm: BaseLLM
""",
    "app/agent.py": """\
import asyncio

from app.base_agent import BaseAgent


class Agent(BaseAgent):
    def step(self, prompt):
        response = self.llm.agenerate_response(prompt)
        return eval(response)

    def run_sync(self, prompt):
        pending = self.llm.agenerate_response(prompt)
        answer = asyncio.run(pending)
        return eval(answer)

    async def astep(self, prompt):
        response = await self.llm.agenerate_response(prompt)
        return eval(response)
""",
}


def test_a_coroutine_made_in_a_plain_function_and_never_run_asks_no_model(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, COROUTINE)
    assert ("app/agent.py", 8) not in calls
    # Handed to asyncio.run, or awaited: the model is asked, and its answer is eval()'d.
    assert calls[("app/agent.py", 12)] == ("BaseLLM.agenerate_response", "required")
    assert calls[("app/agent.py", 17)] == ("BaseLLM.agenerate_response", "required")


# awesome-llm-apps' research agent draws its report as an infographic with Gemini's image model.
INFOGRAPHIC = {
    "app.py": """\
import streamlit as st
from google import genai

client = genai.Client()


def report(findings):
    response = client.models.generate_content(model="gemini-3-pro-preview", contents=f"Summarise: {findings}")
    return response.text


def infographic(summary):
    response = client.models.generate_content(
        model="gemini-3-pro-image-preview", contents=f"Draw a whiteboard summary of: {summary}"
    )
    for part in response.candidates[0].content.parts:
        if part.inline_data:
            st.image(part.inline_data.data)
""",
}


def test_gemini_s_image_models_answer_with_a_picture_not_a_model_call(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, INFOGRAPHIC)
    assert calls[("app.py", 8)] == ("models.generate_content", "autonomous")
    assert ("app.py", 13) not in calls


# qodo-cover's completion parses the answer's YAML in a helper and hands back one of its fields with
# the token counts; the agent runs it as the test command in a shell.
YAML = {
    "app/__init__.py": "",
    "app/caller.py": """\
import litellm


class AICaller:
    def call_model(self, prompt):
        response = litellm.completion(model="m", messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content, response.usage.prompt_tokens, response.usage.completion_tokens
""",
    "app/utils.py": """\
import yaml


def load_yaml(response_text):
    response_text = response_text.strip().removeprefix("```yaml").rstrip("`")
    try:
        data = yaml.safe_load(response_text)
    except Exception:
        data = None
    return data
""",
    "app/completion.py": """\
from app.caller import AICaller
from app.utils import load_yaml


class AgentCompletion:
    def __init__(self, caller: AICaller):
        self.caller = caller

    def adapt_test_command(self, test_command):
        prompt = f"Adapt: {test_command}"
        response_str, prompt_tokens, completion_tokens = self.caller.call_model(prompt)
        new_command_line = None
        try:
            response_yaml = load_yaml(response_str)
            if "new_command_line" in response_yaml:
                new_command_line = response_yaml["new_command_line"].strip()
        except Exception:
            pass
        return new_command_line, prompt_tokens, completion_tokens, prompt
""",
    "app/agent.py": """\
import subprocess

from app.completion import AgentCompletion


class CoverAgent:
    def __init__(self, completion: AgentCompletion):
        self.completion = completion

    def run(self, test_command):
        new_command_line, _, _, _ = self.completion.adapt_test_command(test_command)
        subprocess.run(new_command_line, shell=True)
""",
}


def test_the_answer_parsed_as_yaml_is_the_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, YAML)
    # yaml.safe_load of the answer is its parse, as json.loads: the field handed back is the answer's.
    assert calls[("app/agent.py", 11)] == ("AgentCompletion.adapt_test_command", "required")
    assert calls[("app/completion.py", 11)] == ("AICaller.call_model", "required")
    assert calls[("app/caller.py", 6)] == ("completion", "required")


# MetaGPT registers its actions as tools (@register_tool(include_functions=["run"])): their run asks the
# model, so run(...) on a receiver of any name may be one of them; subprocess.run is not.
REGISTERED = {
    "app/__init__.py": "",
    "app/registry.py": """\
TOOLS = {}


def register_tool(include_functions=None):
    def wrap(cls):
        TOOLS[cls.__name__] = cls
        return cls

    return wrap
""",
    "app/write.py": """\
from openai import OpenAI

from app.registry import register_tool


@register_tool(include_functions=["run"])
class WritePRD:
    def run(self, task):
        response = OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": task}])
        return response.choices[0].message.content
""",
    "app/review.py": """\
from openai import OpenAI

from app.registry import register_tool


@register_tool(include_functions=["run"])
class Review:
    def run(self, task):
        response = OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": task}])
        return response.choices[0].message.content
""",
    "app/env.py": """\
import subprocess

from app.review import Review  # noqa: F401
from app.write import WritePRD  # noqa: F401


def step(todo, task):
    answer = todo.run(task)
    return answer


def adb(command):
    res = subprocess.run(command, shell=True, capture_output=True, text=True)
    return res.stdout.strip()
""",
}


def test_a_standard_library_call_is_no_registered_family_s_method(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, REGISTERED)
    assert calls[("app/env.py", 8)][0] == "todo.run"
    assert ("app/env.py", 13) not in calls


# swarms' Agent keeps its conversation in an object: each answer is added as the agent's turn, and the
# run hands back the conversation formatted (its last message by default).
CONVERSATION = {
    "app/__init__.py": "",
    "app/conversation.py": """\
class Conversation:
    def __init__(self, system_prompt=None):
        self.conversation_history = []
        if system_prompt:
            self.add("System", system_prompt)

    def add(self, role, content):
        self.conversation_history.append({"role": role, "content": content})

    def get_str(self):
        return "\\n".join(f"{m['role']}: {m['content']}" for m in self.conversation_history)

    def get_final_message_content(self):
        return self.conversation_history[-1]["content"]
""",
    "app/formatter.py": """\
def history_output_formatter(conversation, type="list"):
    if type in ["final", "last"]:
        return conversation.get_final_message_content()
    return conversation.get_str()
""",
    "app/llm.py": """\
from litellm import completion


class LiteLLM:
    def __init__(self, model_name):
        self.model_name = model_name

    def run(self, task):
        response = completion(model=self.model_name, messages=[{"role": "user", "content": task}])
        return response.choices[0].message.content
""",
    "app/agent.py": """\
from app.conversation import Conversation
from app.formatter import history_output_formatter
from app.llm import LiteLLM


class Agent:
    def __init__(self, model_name, system_prompt="", output_type="final"):
        self.llm = LiteLLM(model_name)
        self.agent_name = "agent"
        self.user_name = "user"
        self.output_type = output_type
        self.system_prompt = system_prompt
        self.short_memory = Conversation(system_prompt=system_prompt)

    def call_llm(self, task):
        return self.llm.run(task)

    def parse_llm_output(self, response):
        if isinstance(response, dict):
            return response["content"]
        return response

    def _run(self, task):
        self.short_memory.add(role=self.user_name, content=task)
        response = self.call_llm(task)
        response = self.parse_llm_output(response)
        self.short_memory.add(role=self.agent_name, content=response)
        return history_output_formatter(self.short_memory, type=self.output_type)

    def run(self, task):
        return self._run(task)
""",
    "app/main.py": """\
import subprocess

from app.agent import Agent


def main(task):
    command = Agent("m").run(task)
    subprocess.run(command, shell=True)
""",
}


def test_an_answer_added_as_the_agent_s_turn_to_its_conversation_object_is_handed_back_with_it(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, CONVERSATION)
    # _run adds the answer as the agent's turn and returns the conversation formatted: a wrapper, as
    # run returning it; the caller runs it in a shell.
    assert calls[("app/agent.py", 31)] == ("Agent._run", "required")
    assert calls[("app/main.py", 7)] == ("Agent.run", "required")
    assert calls[("app/llm.py", 9)] == ("completion", "required")
