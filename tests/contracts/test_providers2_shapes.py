"""Held out, the providers 2 round: provider client classes and the code the model writes.

Written from what real data and coding agents do (one package per provider, a module of it named
after the SDK it wraps, a base class calling the client its subclasses build); the repositories
themselves stay out of this repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

# One package per provider: pandasai_openai/openai.py defines the project's class OpenAI, and another
# provider package builds the SDK's own client with ``from openai import OpenAI``.
SDK_NAMED_MODULE = {
    "llms/openai/pandasai_openai/__init__.py": "from .openai import OpenAI\n",
    "llms/openai/pandasai_openai/openai.py": """\
import openai


class OpenAI:
    def __init__(self, model="gpt-4o"):
        self.model = model
        self.client = openai.OpenAI().chat.completions

    def chat_completion(self, value):
        response = self.client.create(model=self.model, messages=[{"role": "user", "content": value}])
        return response.choices[0].message.content
""",
    "llms/local/pandasai_local/__init__.py": "from .local_llm import LocalLLM\n",
    "llms/local/pandasai_local/local_llm.py": """\
from openai import OpenAI


class LocalLLM:
    def __init__(self, api_base, model=""):
        self.model = model
        self.client = OpenAI(base_url=api_base, api_key="dummy").chat.completions

    def chat_completion(self, value):
        params = {"model": self.model, "messages": [{"role": "user", "content": value}]}
        response = self.client.create(**params)
        return response.choices[0].message.content
""",
}


def test_a_module_named_after_an_sdk_inside_a_package_does_not_shadow_the_sdk(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, SDK_NAMED_MODULE)
    # openai.OpenAI was also the short name of the project's pandasai_openai.openai.OpenAI, so the SDK's
    # client built in local_llm.py was taken for that class and its chat.completions.create was no call.
    assert calls[("llms/local/pandasai_local/local_llm.py", 11)][0] == "chat.completions.create"
    assert calls[("llms/openai/pandasai_openai/openai.py", 10)][0] == "chat.completions.create"


# The base class calls the client; only the classes deriving from it, in other modules, build it.
CLIENT_SET_IN_SUBCLASS = {
    "llms/__init__.py": "from .azure import AzureChatGPT\nfrom .chat import ChatGPT\n",
    "llms/base.py": """\
from typing import Any


class BaseOpenAI:
    client: Any
    model: str = "gpt-4o"

    def chat_completion(self, value):
        params = {"model": self.model, "messages": [{"role": "user", "content": value}]}
        response = self.client.create(**params)
        return response.choices[0].message.content

    def call(self, prompt):
        return self.chat_completion(prompt)
""",
    "llms/chat.py": """\
import openai

from .base import BaseOpenAI


class ChatGPT(BaseOpenAI):
    def __init__(self, api_token=None):
        self.client = openai.OpenAI(api_key=api_token).chat.completions
""",
    "llms/azure.py": """\
import openai

from .base import BaseOpenAI


class AzureChatGPT(BaseOpenAI):
    def __init__(self, deployment):
        self.client = openai.AzureOpenAI(azure_deployment=deployment).chat.completions
""",
    "llms/other.py": """\
class Plain:
    def ask(self, value):
        return self.client.create(model="m", messages=[{"role": "user", "content": value}])
""",
}


def test_a_client_a_subclass_of_another_module_builds_is_the_base_class_client(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, CLIENT_SET_IN_SUBCLASS)
    # self.client was bound only in ChatGPT.__init__ and AzureChatGPT.__init__ (chat.py, azure.py); in
    # BaseOpenAI's own module it was an annotation (Any), so the request every provider sends was no call.
    assert calls[("llms/base.py", 10)][0] == "chat.completions.create"
    assert calls[("llms/base.py", 14)][0] == "BaseOpenAI.chat_completion"
    # A class deriving from nothing that binds no client: still nothing.
    assert not [where for where in calls if where[0] == "llms/other.py"]


# A code interpreter session: the agent's one tool is a method of the session running the model's code.
SESSION_METHOD_TOOL = {
    "session.py": """\
import subprocess

from langchain.agents import AgentExecutor, OpenAIFunctionsAgent
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI


class Session:
    def __init__(self):
        self.llm = ChatOpenAI(model="gpt-4o")
        tools = [StructuredTool(name="python", description="Run Python code.", func=self._run_handler)]
        agent = OpenAIFunctionsAgent.from_llm_and_tools(llm=self.llm, tools=tools)
        self.agent_executor = AgentExecutor(agent=agent, tools=tools)

    def _run_handler(self, code: str) -> str:
        return subprocess.run(["python", "-c", code], capture_output=True, text=True).stdout

    def generate_response(self, user_msg):
        return self.agent_executor.invoke({"input": user_msg})["output"]
""",
}


def test_a_tool_whose_function_is_a_method_of_the_class_is_classified_by_that_method(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, SESSION_METHOD_TOOL)
    # func=self._run_handler: the tool was known by its name alone ("python", read-only as far as that
    # tells), so the run of the model's code was R9, sampled.
    assert calls[("session.py", 19)] == ("invoke", "required")


# AgentExecutor.from_agent_and_tools builds the executor, over an attribute annotated with its class.
SESSION_FROM_AGENT_AND_TOOLS = {
    "session.py": """\
import subprocess
from typing import Optional

from langchain.agents import AgentExecutor, OpenAIFunctionsAgent
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI


def run_python(code: str) -> str:
    return subprocess.run(["python", "-c", code], capture_output=True, text=True).stdout


class Session:
    def __init__(self):
        self.llm = ChatOpenAI(model="gpt-4o")
        self.agent_executor: Optional[AgentExecutor] = None

    def start(self):
        tools = [StructuredTool(name="python", description="Run Python code.", func=run_python)]
        agent = OpenAIFunctionsAgent.from_llm_and_tools(llm=self.llm, tools=tools)
        self.agent_executor = AgentExecutor.from_agent_and_tools(agent=agent, tools=tools)

    def generate_response(self, user_msg):
        return self.agent_executor.invoke({"input": user_msg})["output"]
""",
}


def test_agent_executor_from_agent_and_tools_is_the_executor(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, SESSION_FROM_AGENT_AND_TOOLS)
    # from_agent_and_tools(...) was a LangChain runnable wrapping its agent, not the AgentExecutor the
    # attribute's annotation names, so the annotation (no tools) stood for the executor.
    assert calls[("session.py", 24)] == ("invoke", "required")


# The model's code runs in a CodeBox (codeboxapi: a local Jupyter kernel unless an API key is set).
CODEBOX_TOOL = {
    "agent.py": """\
from codeboxapi import CodeBox
from langchain.agents import AgentExecutor, OpenAIFunctionsAgent
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI

codebox = CodeBox()


def run_python(code: str) -> str:
    return codebox.run(code).content


def answer(question):
    llm = ChatOpenAI(model="gpt-4o")
    tools = [StructuredTool(name="python", description="Run Python code.", func=run_python)]
    agent = OpenAIFunctionsAgent.from_llm_and_tools(llm=llm, tools=tools)
    executor = AgentExecutor(agent=agent, tools=tools)
    return executor.invoke({"input": question})["output"]
""",
}


def test_code_a_codebox_runs_is_code_execution(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, CODEBOX_TOOL)
    # codebox.run(code) was no known effect: the tool read only as far as its body told.
    assert calls[("agent.py", 18)] == ("invoke", "required")


# The executor is built by a method of the session, called when the session starts.
SESSION_EXECUTOR_METHOD = {
    "session.py": """\
import subprocess
from typing import Optional

from langchain.agents import AgentExecutor, OpenAIFunctionsAgent
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI


def run_python(code: str) -> str:
    return subprocess.run(["python", "-c", code], capture_output=True, text=True).stdout


class Session:
    def __init__(self):
        self.llm = ChatOpenAI(model="gpt-4o")
        self.tools = [StructuredTool(name="python", description="Run Python code.", func=run_python)]
        self.agent_executor: Optional[AgentExecutor] = None

    def start(self):
        self.agent_executor = self._agent_executor()

    def _agent_executor(self) -> AgentExecutor:
        agent = OpenAIFunctionsAgent.from_llm_and_tools(llm=self.llm, tools=self.tools)
        return AgentExecutor(agent=agent, tools=self.tools)

    def generate_response(self, user_msg):
        return self.agent_executor.invoke({"input": user_msg})["output"]


class Plain:
    def __init__(self):
        self.llm = ChatOpenAI(model="gpt-4o")
        self.tools = [StructuredTool(name="python", description="Run Python code.", func=run_python)]
        self.agent_executor = None

    def start(self):
        self.agent_executor = self._agent_executor()

    def _agent_executor(self):
        agent = OpenAIFunctionsAgent.from_llm_and_tools(llm=self.llm, tools=self.tools)
        return AgentExecutor(agent=agent, tools=self.tools)

    def generate_response(self, user_msg):
        return self.agent_executor.invoke({"input": user_msg})["output"]
""",
}


def test_an_agent_a_method_of_the_class_builds_and_returns_runs_its_tools(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, SESSION_EXECUTOR_METHOD)
    # self._agent_executor() was the annotation's AgentExecutor (-> AgentExecutor), or nothing without
    # one: the executor it returns, with its tools, was never read, and the model's code run was free text.
    assert calls[("session.py", 27)] == ("invoke", "required")
    assert calls[("session.py", 44)] == ("invoke", "required")
