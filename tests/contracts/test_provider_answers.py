"""Provider classes' answers reaching what they drive (the providers 2 round, held out).

Written from what real agent code does (a chat class per provider behind one ``ainvoke``, the caller
parsing the reply into actions it runs); the repositories stay out of this repository, only their
hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contracts.projects import scan_files

CHAT = """\
from openai import AsyncOpenAI


class Completion:
    def __init__(self, completion):
        self.completion = completion


class Chat:
    async def ainvoke(self, messages, output_format=None):
        resp = await AsyncOpenAI().chat.completions.create(model="m", messages=messages, response_format={{"type": "json_object"}})
        content = resp.choices[0].message.content
        if not content:
            raise ValueError("empty answer")
        parsed = {parse}
        return Completion(completion=parsed)
"""

AGENT = """\
import subprocess

from chat import Chat


async def step(chat: Chat, output_format):
    reply = await chat.ainvoke([], output_format=output_format)
    subprocess.run(reply.completion.command, shell=True)
"""


@pytest.mark.parametrize(
    "parse",
    ["output_format.model_validate_json(content)", "output_format.model_validate(json.loads(content))",
     "TypeAdapter(output_format).validate_json(content)", "json.loads(content)"],
)  # fmt: skip
def test_the_answer_parsed_into_the_schema_asked_for_is_the_answer(tmp_path: Path, parse: str) -> None:
    chat = CHAT.format(parse=parse).replace("from openai", "import json\nfrom pydantic import TypeAdapter\nfrom openai")
    result = scan_files(tmp_path, {"chat.py": chat, "agent.py": AGENT})
    provider = next(c for c in result.calls if c.location.path == "chat.py")
    assert provider.recommendation.mode == "required"  # the caller runs the command parsed out of it
    assert provider.recommendation.rules == ("R1",)


def test_a_value_computed_from_the_answer_is_not_the_answer(tmp_path: Path) -> None:
    chat = CHAT.format(parse="len(content)")
    result = scan_files(tmp_path, {"chat.py": chat, "agent.py": AGENT})
    provider = next(c for c in result.calls if c.location.path == "chat.py")
    assert provider.recommendation.mode != "required"
