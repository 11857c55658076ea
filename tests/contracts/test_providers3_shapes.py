"""Held out, the providers 3 round: provider client layers and model APIs the scan did not know.

Written from what real research and chat apps do (a script driving aider's Python API, a table of
provider functions picked by the configured name); the repositories themselves stay out of this
repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

# aider's Python API: the coder built once under __main__, handed to the stages that run it.
AIDER_SCRIPT = {
    "writeup.py": """\
import subprocess


def fix_latex(coder, folder):
    out = subprocess.run(["chktex", f"{folder}/template.tex"], capture_output=True, text=True)
    if out.stdout:
        coder.run(f"Fix these LaTeX errors: {out.stdout}")


def perform_writeup(idea, folder, coder):
    coder_out = coder.run(f"Write the abstract of {idea['Title']}")
    fix_latex(coder, folder)
    return coder_out


if __name__ == "__main__":
    from aider.coders import Coder
    from aider.io import InputOutput
    from aider.models import Model

    io = InputOutput(yes=True, chat_history_file="run/aider.txt")
    coder = Coder.create(main_model=Model("gpt-4o"), fnames=["run/template.tex"], io=io, edit_format="diff")
    perform_writeup({"Title": "x"}, "run", coder)
""",
    "asked.py": """\
from aider.coders import Coder
from aider.io import InputOutput
from aider.models import Model

coder = Coder.create(main_model=Model("gpt-4o"), fnames=["notes.md"], io=InputOutput())
coder.run("Tidy the notes")
""",
}


def test_aiders_coder_run_is_a_model_call_that_edits_files_and_runs_shell_commands_when_told_yes(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, AIDER_SCRIPT)
    # Coder.run asks the model and applies its edits; with InputOutput(yes=True) the shell commands the
    # model suggests run unasked: required, through the parameter the module's own call sites fill.
    assert calls[("writeup.py", 7)] == ("run", "required")
    assert calls[("writeup.py", 11)] == ("run", "required")
    # An InputOutput() that asks on the terminal: the edits alone, a write to review.
    assert calls[("asked.py", 6)] == ("run", "reviewed")


# A provider base class whose public entry point retries: the bound method picked by a flag is handed to
# a retry loop that keeps the callback's answer under a name and returns it; subclasses implement chat.
RETRYING_PROVIDER = {
    "bot/__init__.py": "",
    "bot/providers/__init__.py": "",
    "bot/agent/__init__.py": "",
    "bot/providers/base.py": """\
import asyncio
from abc import ABC, abstractmethod


class LLMResponse:
    def __init__(self, content, finish_reason="stop"):
        self.content = content
        self.finish_reason = finish_reason


class LLMProvider(ABC):
    @abstractmethod
    async def chat(self, messages, tools=None, model=None):
        ...

    async def chat_stream(self, messages, tools=None, model=None):
        return await self.chat(messages=messages, tools=tools, model=model)

    async def _safe_chat(self, **kwargs):
        try:
            return await self.chat(**kwargs)
        except Exception as exc:
            return LLMResponse(f"Error calling LLM: {exc}", "error")

    async def _safe_chat_stream(self, **kwargs):
        try:
            return await self.chat_stream(**kwargs)
        except Exception as exc:
            return LLMResponse(f"Error calling LLM: {exc}", "error")

    async def chat_with_retry(self, messages, tools=None, model=None, stream=False):
        kw = dict(messages=messages, tools=tools, model=model)
        return await self._run_chat_with_retry(kw, stream=stream)

    async def _run_chat_with_retry(self, kw, *, stream):
        call = self._safe_chat_stream if stream else self._safe_chat
        return await self._run_with_retry(call, kw)

    async def _run_with_retry(self, call, kw):
        for delay in (1, 2, 4):
            response = await call(**kw)
            if response.finish_reason != "error":
                return response
            await asyncio.sleep(delay)
        return response
""",
    "bot/providers/openai_provider.py": """\
from openai import AsyncOpenAI

from bot.providers.base import LLMProvider, LLMResponse


class OpenAIProvider(LLMProvider):
    def __init__(self, api_key):
        self._client = AsyncOpenAI(api_key=api_key)

    async def chat(self, messages, tools=None, model=None):
        response = await self._client.chat.completions.create(model=model or "gpt-4o", messages=messages, tools=tools)
        return LLMResponse(response.choices[0].message.content)
""",
    "bot/agent/runner.py": """\
import subprocess


class AgentRunner:
    def __init__(self, provider):
        self.provider = provider

    async def run(self, task):
        response = await self.provider.chat_with_retry(messages=[{"role": "user", "content": task}])
        subprocess.run(response.content, shell=True)
""",
}


def test_a_retry_loop_handed_a_bound_method_picked_by_a_flag_hands_back_its_answer(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, RETRYING_PROVIDER)
    # _run_with_retry returns what `response = await call(**kw)` kept; call is _safe_chat_stream or _safe_chat:
    # chat_with_retry is a wrapper, and the runner (receiver `provider`, after LLMProvider) runs its answer.
    assert calls[("bot/providers/base.py", 37)] == ("LLMProvider._safe_chat_stream", "required")
    assert calls[("bot/agent/runner.py", 9)] == ("LLMProvider.chat_with_retry", "required")
    assert calls[("bot/providers/openai_provider.py", 11)] == ("chat.completions.create", "required")

# One bridge module per provider: the endpoint read from config, the body built by a helper that hands
# back (headers, payload).
BRIDGE = {
    "bridge_chatgpt.py": """\
import requests

from config import get_conf


def generate_payload(inputs, llm_kwargs, history, system_prompt):
    headers = {"Authorization": f"Bearer {get_conf('API_KEY')}"}
    messages = [{"role": "system", "content": system_prompt}, *history, {"role": "user", "content": inputs}]
    payload = {"model": llm_kwargs["llm_model"], "messages": messages, "stream": True}
    return headers, payload


def generate_probe():
    return {}, {"ping": True}


def predict_no_ui_long_connection(inputs, llm_kwargs, history=[], sys_prompt=""):
    headers, payload = generate_payload(inputs, llm_kwargs, history, sys_prompt)
    endpoint = get_conf("API_URL_REDIRECT")[llm_kwargs["llm_model"]]
    response = requests.post(endpoint, headers=headers, json=payload, stream=True, timeout=30)
    return response.text


def ping():
    headers, body = generate_probe()
    return requests.post(get_conf("HEALTH_URL"), headers=headers, json=body)
""",
}


def test_a_post_whose_body_a_helper_builds_and_hands_back_in_a_tuple_asks_a_model(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, BRIDGE)
    # headers, payload = generate_payload(...): the dict bound to payload there has model and messages.
    assert calls[("bridge_chatgpt.py", 20)][0] == "http.post"
    # A body without them, handed back the same way, is no question to a model.
    assert ("bridge_chatgpt.py", 26) not in calls


# LangChain 0.1's chain API in a streaming endpoint: the chain run as a background task.
LEGACY_CHAIN = {
    "completion.py": """\
import asyncio

from langchain.callbacks import AsyncIteratorCallbackHandler
from langchain.chains import LLMChain
from langchain.prompts import PromptTemplate
from langchain_openai import OpenAI


async def completion_iterator(query: str, model_name: str):
    callback = AsyncIteratorCallbackHandler()
    model = OpenAI(model=model_name, streaming=True, callbacks=[callback])
    chain = LLMChain(prompt=PromptTemplate.from_template("{input}"), llm=model)
    task = asyncio.create_task(chain.acall({"input": query}))
    async for token in callback.aiter():
        yield token
    await task
""",
}


def test_a_chains_acall_is_a_model_call(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, LEGACY_CHAIN)
    assert calls[("completion.py", 13)][0] == "acall"
