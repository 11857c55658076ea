"""The scan on generated projects: whatever the code, it reports and never falls over.

Each project is a few modules built from two sources, interleaved at top level:
snippets shaped like real agent code (SDK clients, wrappers, tools that move money
or run commands, agents that list them, runners whose answers drive actions), with
names drawn from a small pool so that they refer to one another across modules, and
arbitrary valid Python from hypothesmith (a generator of programs from Python's own
grammar, made to fuzz parsers and formatters such as libcst, on which the scan stands).
Sometimes a module is cut short, so it no longer parses.

What must hold for any such project:
- the scan returns (no exception escapes it);
- a module that imports an SDK and that Python cannot parse is reported, not skipped;
- every call it reports points at its own text: the location's span is the call's source;
- scanning the same files twice gives the same calls and the same modes.
"""

from __future__ import annotations

import ast
import re
import tempfile
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from escalated.contracts.scan.discovery import scan_tree

HEADER = """\
import os
import subprocess
import openai
import stripe
from agents import Agent, Runner, function_tool
from {other} import *

client = openai.OpenAI()
"""

# Placeholders: {f} {g} wrapper/caller functions, {t} a tool, {a} an agent, {c} a class, {m} a method.
SNIPPETS = [
    """
def {f}(prompt):
    return client.chat.completions.create(model="gpt-4o", messages=[{{"role": "user", "content": prompt}}]).choices[0].message.content
""",
    """
async def {f}(prompt, *, model="gpt-4o"):
    response = await openai.AsyncOpenAI().responses.create(model=model, input=prompt)
    return response.output_text
""",
    '''
@function_tool
def {t}(amount: int) -> str:
    """Refund the customer."""
    stripe.Refund.create(amount=amount)
    return "refunded"
''',
    """
@function_tool
def {t}(command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout
""",
    """
{a} = Agent(name="{a}", instructions="Help the customer.", tools=[{t}])
""",
    """
{a} = Agent[dict](name="{a}", tools=[{t}], handoffs=[{b}])
""",
    """
async def {g}(question):
    result = await Runner.run({a}, question)
    if result.final_output.strip().lower() == "yes":
        subprocess.run(["rm", "-rf", question])
    return result
""",
    """
def {g}(text):
    answer = {f}(text)
    os.system(answer)
""",
    """
class {c}:
    def __init__(self, llm):
        self.llm = llm

    def {m}(self, text):
        return self.llm.invoke(text)

    def act(self, text):
        for line in self.{m}(text).splitlines():
            {t}(line)
""",
    """
def {g}():
    with open("notes.md", "w") as out:
        out.write({f}("summarise"))
""",
    """
if __name__ == "__main__":
    print({f}(input()))
""",
    """
{g} = lambda q: {f}(q) or {g}(q)
""",
]

NAMES = {
    "f": ["ask", "complete", "chat"],
    "g": ["handle", "run_task", "main"],
    "t": ["refund", "shell", "lookup"],
    "a": ["support", "triage"],
    "b": ["support", "triage"],
    "c": ["Worker", "Planner"],
    "m": ["think", "plan"],
}
MODULES = ["app", "tools", "agents_setup"]


@st.composite
def snippet(draw) -> str:
    template = draw(st.sampled_from(SNIPPETS))
    return template.format(**{key: draw(st.sampled_from(pool)) for key, pool in NAMES.items()})


# Arbitrary top-level code: hypothesmith's programs are valid but odd (deep nesting,
# unusual literals, every statement form), the input libcst and our visitors must bear.
filler = hypothesmith.from_grammar(start="file_input").map(lambda src: src if src.endswith("\n") else src + "\n")


@st.composite
def module_text(draw, name: str) -> str:
    other = draw(st.sampled_from([m for m in MODULES if m != name]))
    parts = draw(st.lists(st.one_of(snippet(), snippet(), filler), min_size=1, max_size=6))
    header = HEADER.format(other=other)
    text = header + "".join(parts)
    if draw(st.integers(0, 9)) == 0:  # now and then, a module cut short
        text = text[: draw(st.integers(len(header), len(text)))]
    return text


@st.composite
def project(draw) -> dict[str, str]:
    names = draw(st.lists(st.sampled_from(MODULES), min_size=1, max_size=3, unique=True))
    return {f"{name}.py": draw(module_text(name)) for name in names}


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def span(text: str, loc) -> str:
    # Python's lines end at \n, \r\n or \r only (str.splitlines also splits at \f, \x1c, \u2028...).
    lines = re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", text)
    if loc.line == loc.end_line:
        return lines[loc.line - 1][loc.column : loc.end_column]
    middle = "".join(lines[loc.line : loc.end_line - 1])
    return lines[loc.line - 1][loc.column :] + middle + lines[loc.end_line - 1][: loc.end_column]


def calls_of(result) -> list[tuple]:
    return [(c.location.path, c.location.line, c.location.column, c.api, c.function, c.recommendation.mode) for c in result.calls]


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,  # the same projects every run: a failure is reproduced by rerunning
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(project())
def test_the_scan_reports_any_project_and_never_falls_over(files):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in files.items():
            (root / name).write_text(text)

        result = scan_tree(root)
        again = scan_tree(root)

    reported = {problem.path for problem in result.errors}
    for name, text in files.items():
        if not parses(text):
            assert name in reported, f"{name} does not parse and was not reported"
    for call in result.calls:
        text = files[call.location.path]
        assert span(text, call.location) == call.source, call.location
    assert calls_of(again) == calls_of(result)
    assert again.errors == result.errors
