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
