"""After ``apply``, a program behaves exactly as before (with autonomous guards).

The agent below exercises the call styles that make a lambda wrapper risky —
loops and comprehensions (late binding), closures, ``**kwargs``, chained
attribute access, awaited calls, sync and async streams, a stream context
manager, a call that raises — against stand-ins for the OpenAI and Anthropic
SDKs (third-party parts, not ours). It runs once as written and once after
init + apply; the two outputs must be identical.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from escalated.contracts.edit.cli import apply, init
from escalated.guard.contracts import ContractSet, load_contracts, save_contracts
from escalated.contracts.scan.discovery import scan_tree

FAKE_OPENAI = '''
class _Completions:
    def create(self, *, model, messages, stream=False, **extra):
        text = f"{model}:{messages[-1]['content']}:{sorted(extra)}"
        if stream:
            return iter(text.split(":"))
        if messages[-1]["content"] == "boom":
            raise ValueError("provider error")
        return type("Completion", (), {"choices": [type("Choice", (), {"text": text})()]})()


class _AsyncCompletions:
    async def create(self, *, model, messages, **extra):
        return f"async {model}:{messages[-1]['content']}"


class _Chat:
    def __init__(self, completions):
        self.completions = completions


class OpenAI:
    chat = _Chat(_Completions())


class AsyncOpenAI:
    chat = _Chat(_AsyncCompletions())
'''

FAKE_ANTHROPIC = '''
class _Stream:
    def __init__(self, words):
        self._words = iter(words)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._words)


class _Manager:
    def __init__(self, words):
        self.words = words

    def __enter__(self):
        return _Stream(self.words)

    def __exit__(self, *exc):
        print("stream closed")


class _Messages:
    def stream(self, *, model, messages, max_tokens):
        return _Manager([model, str(max_tokens), messages[0]["content"]])


class Anthropic:
    messages = _Messages()
'''

AGENT = '''\
"""An agent with every awkward call style."""
import asyncio

from anthropic import Anthropic
from openai import AsyncOpenAI, OpenAI

client = OpenAI()
aclient = AsyncOpenAI()
OPTIONS = {"temperature": 0, "seed": 7}


def in_a_loop(topics):
    answers = []
    for topic in topics:
        answers.append(client.chat.completions.create(model="m", messages=[{"role": "user", "content": topic}]).choices[0].text)
    return answers


def in_a_comprehension(topics):
    return [client.chat.completions.create(model="c", messages=[{"role": "user", "content": t}], **OPTIONS).choices[0].text for t in topics]


def in_a_closure(prefix):
    def ask(question):
        return client.chat.completions.create(model=prefix, messages=[{"role": "user", "content": question}])

    return [ask(q).choices[0].text for q in ("x", "y")]


def streamed():
    return list(client.chat.completions.create(model="s", messages=[{"role": "user", "content": "hi"}], stream=True))


def with_a_manager():
    with Anthropic().messages.stream(model="claude", max_tokens=5, messages=[{"role": "user", "content": "yo"}]) as s:
        return [word for word in s]


def raises():
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "boom"}])
    except ValueError as exc:
        return f"caught {exc}"


async def awaited(topics):
    return await asyncio.gather(*[aclient.chat.completions.create(model="a", messages=[{"role": "user", "content": t}]) for t in topics])


if __name__ == "__main__":
    print(in_a_loop(["a", "b", "c"]))
    print(in_a_comprehension(["d", "e"]))
    print(in_a_closure("p"))
    print(streamed())
    print(with_a_manager())
    print(raises())
    print(asyncio.run(awaited(["f", "g"])))
'''


def _run(project: Path, *, stderr: list[str] | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(Path.cwd())])}
    for name in ("ESCALATED_CONTRACTS", "ESCALATED_URL", "ESCALATED_API_KEY"):
        env.pop(name, None)
    proc = subprocess.run(
        [sys.executable, "agent.py"], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    if stderr is not None:
        stderr.append(proc.stderr)
    return proc.stdout


@pytest.mark.parametrize("mode", ["autonomous", "reviewed"])
def test_an_applied_program_prints_exactly_what_it_printed_before(tmp_path, mode):
    """Reviewed, with no server configured: results (streams included) pass through; failures are logged."""
    project = tmp_path / "project"
    for package, text in (("openai", FAKE_OPENAI), ("anthropic", FAKE_ANTHROPIC)):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text(text)
    (project / "agent.py").write_text(AGENT)
    before = _run(project)

    calls = [c for c in scan_tree(project).calls if c.location.path == "agent.py"]
    # in_a_closure's ask(q) too: a call site of the nested wrapper; and with_a_manager() in __main__, whose
    # [word for word in s] picks each piece of the stream (a wrapper since the recall 7 round)
    assert len(calls) == 9
    result = CliRunner().invoke(init, [str(project)], input="a\n" * 20)
    assert result.exit_code == 0, result.output
    contracts = load_contracts(project)
    save_contracts(
        project,
        ContractSet({cid: attrs.evolve(c, mode=mode, sample_rate=None) for cid, c in contracts.contracts.items()}),
    )
    result = CliRunner().invoke(apply, [str(project), "--yes"])
    assert result.exit_code == 0, result.output
    applied = (project / "agent.py").read_text()
    assert applied.count('guard("agent.') == 9 and "await guard(" not in applied  # gather() takes the coroutine

    stderr: list[str] = []
    assert _run(project, stderr=stderr) == before
    assert "stream closed" in before and "caught provider error" in before
    filing_failures = stderr[0].count("could not file the review")
    # 3 + 2 + 2 + 2 + 1 + 1 + 2, and with_a_manager()'s call site in __main__ 1; raises() files none
    assert filing_failures == (0 if mode == "autonomous" else 14)
