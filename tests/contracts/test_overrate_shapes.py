"""Over-ratings the held-out repositories showed (the overrate round): the scan recommending a
stricter mode than a careful engineer would sign, each shape a small project.

Written from what real agent code does (an answer parsed by a class's ``from_string``
constructor, ...); the repositories themselves stay out of this repository, only their hand
labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

PARSED_BY_CLASS = """\
import re

from jinja2 import Environment
from openai import OpenAI

client = OpenAI()


class Snippets:
    def __init__(self, indices):
        self.indices = indices

    @classmethod
    def from_string(cls, text):
        return cls([int(i) for i in re.findall(r"\\d+", text)])


def pick(question):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    return Snippets.from_string(answer.choices[0].message.content).indices


def page(question):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    return Environment().from_string(answer.choices[0].message.content).render()


def page_from(env, question):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    return env.from_string(answer.choices[0].message.content).render()
"""


def test_a_class_constructor_from_string_parses_the_answer_and_renders_no_template(tmp_path: Path) -> None:
    # Snippets.from_string(text), the alternate-constructor idiom (like from_json, from_dict), parses the
    # answer into the project's object: no markup is rendered. A Jinja environment's from_string still
    # makes the answer a template (R8).
    calls = scan_calls(tmp_path, {"app.py": PARSED_BY_CLASS})
    assert calls == {
        ("app.py", 19): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 24): ("chat.completions.create", "reviewed", ("R8",)),
        ("app.py", 29): ("chat.completions.create", "reviewed", ("R8",)),
    }


LOOP_NAME_REUSED = """\
import subprocess

from openai import OpenAI

client = OpenAI()


def chat(question, tool_events):
    for result in tool_events():
        command = result
    subprocess.run(command, shell=True)
    stream = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}], stream=True)
    for result in stream:
        print(result.choices[0].delta.content)


def agent(question):
    stream = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}], stream=True)
    for result in stream:
        print(result.choices[0].delta.content)
    command = result.choices[0].delta.content
    subprocess.run(command, shell=True)
"""


def test_a_loop_variable_holds_the_answer_only_from_its_loop_on(tmp_path: Path) -> None:
    # khoj's chat: ``async for result in send_event(...)`` carries events, then the streamed reply; a name
    # bound again by a later loop over the answer does not reach what the earlier loop's value reached.
    # Used after the loop over the answer, it still carries it.
    calls = scan_calls(tmp_path, {"app.py": LOOP_NAME_REUSED})
    assert calls == {
        ("app.py", 12): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 18): ("chat.completions.create", "required", ("R1",)),
    }



COMPREHENSION_NAME = """\
import subprocess

from openai import OpenAI

client = OpenAI()


def summarize(question, script):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    lines = [line.strip() for line in answer.choices[0].message.content.splitlines()]
    print(lines)
    for line in open(script):
        subprocess.run(line, shell=True)


def run_all(question):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    commands = [line.strip() for line in answer.choices[0].message.content.splitlines()]
    for command in commands:
        subprocess.run(command, shell=True)
"""


def test_a_comprehension_variable_is_not_the_function_variable_of_the_same_name(tmp_path: Path) -> None:
    # ``[line.strip() for line in answer...]`` binds its own ``line``: the function's ``line`` read from a
    # script is another variable. What the comprehension builds still carries the answer.
    calls = scan_calls(tmp_path, {"app.py": COMPREHENSION_NAME})
    assert calls == {
        ("app.py", 9): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 17): ("chat.completions.create", "required", ("R1",)),
    }



SWITCHED_OFF = """\
import subprocess

from openai import OpenAI

client = OpenAI()


def check(output):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": output}])
    if True or answer.choices[0].message.content == "success":
        return "done"
    subprocess.run(["make", "debug"])
    return "failed"


def check_again(output, retries):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": output}])
    if answer.choices[0].message.content == "success" or retries > 3:
        return "done"
    return "failed"
"""


def test_a_check_switched_off_by_a_constant_chooses_nothing(tmp_path: Path) -> None:
    # gpt-pilot's executor: ``if True or llm_response.success: return done``: the answer is never read for
    # the choice, the other arm never runs. Beside another test, the answer still chooses.
    calls = scan_calls(tmp_path, {"app.py": SWITCHED_OFF})
    assert calls == {
        ("app.py", 9): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 17): ("chat.completions.create", "sampled", ("R10",)),
    }


KEPT_IF_ANY = """\
from openai import OpenAI
from pydantic import BaseModel

client = OpenAI()


class Queries(BaseModel):
    queries: list[str]
    urgent: bool


def queries_for(docs):
    found = {}
    for key in docs:
        answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": key}])
        parsed = Queries.model_validate_json(answer.choices[0].message.content)
        if parsed.queries:
            found[key] = parsed.queries
    return found


def triage(docs):
    found = {}
    for key in docs:
        answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": key}])
        parsed = Queries.model_validate_json(answer.choices[0].message.content)
        if parsed.urgent:
            found[key] = "escalate"
    return found
"""


def test_an_answer_kept_only_when_it_has_something_chooses_nothing(tmp_path: Path) -> None:
    # gpt-pilot's external docs: ``if llm_response.queries: queries[k] = llm_response.queries``: the check
    # decides whether the answer is kept, not what happens; where it goes is judged there. A constant
    # kept on the answer's say (a route, a flag) is still a choice.
    calls = scan_calls(tmp_path, {"app.py": KEPT_IF_ANY})
    assert calls == {
        ("app.py", 15): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 25): ("chat.completions.create", "sampled", ("R10",)),
    }


LOOP_OBJECT_WRITTEN = """\
import subprocess

from openai import OpenAI

client = OpenAI()


def describe(files, current):
    to_describe = {f.path: f.content for f in current}
    for file in files:
        content = to_describe.get(file.path)
        if content == "":
            file.meta = "empty"
            continue
        answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": content}])
        file.meta = answer.choices[0].message.content


def fix(files):
    for file in files:
        answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": file.path}])
        file.command = answer.choices[0].message.content
        subprocess.run(file.command, shell=True)
"""


def test_a_loop_variable_written_with_the_answer_carries_it_only_in_that_turn(tmp_path: Path) -> None:
    # gpt-pilot's describe_files: ``for file in next_state.files: ... file.meta = {... llm_response ...}``:
    # the next turn's ``file`` is another object, so the check at the top of the loop reads no answer.
    # After the write, in the same turn, the object carries it.
    calls = scan_calls(tmp_path, {"app.py": LOOP_OBJECT_WRITTEN})
    assert calls == {
        ("app.py", 15): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 21): ("chat.completions.create", "required", ("R1",)),
    }


NESTED_LOOP_NAME = """\
import subprocess

from openai import OpenAI

client = OpenAI()


def chat(question, events):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    for line in answer.choices[0].message.content.splitlines():
        print(line)

    def replay():
        for line in events:
            subprocess.run(line, shell=True)

    replay()
"""


def test_a_nested_function_loop_variable_is_its_own(tmp_path: Path) -> None:
    # khoj's event_generator nests send_llm_response, whose ``async for result in send_event(...)`` binds its
    # own ``result``: a loop in a nested function makes the name local there, as a parameter or an
    # assignment already did.
    calls = scan_calls(tmp_path, {"app.py": NESTED_LOOP_NAME})
    assert calls == {("app.py", 9): ("chat.completions.create", "autonomous", ("R11",))}


ASKS_A_PERSON = """\
import subprocess

from openai import OpenAI

client = OpenAI()


class Writer:
    def __init__(self, ui):
        self.ui = ui

    async def ask_question(self, question, buttons=None):
        return await self.ui.ask_question(question, buttons=buttons)

    async def spec(self, description):
        answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": description}])
        reply = await self.ask_question(answer.choices[0].message.content, buttons={"skip": "Skip"})
        if reply.button == "skip":
            return description
        return reply.text

    async def fix(self, description):
        answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": description}])
        command = answer.choices[0].message.content
        reply = await self.ask_question(f"Run {command}?", buttons={"yes": "Yes"})
        if reply.button == "yes":
            subprocess.run(command, shell=True)
"""


def test_what_a_person_answers_to_a_question_showing_the_answer_is_the_person_s(tmp_path: Path) -> None:
    # gpt-pilot's spec writer asks the user the model's question (ask_question) and branches on the button
    # the user pressed: the person chose, not the model. The answer's own flow still counts: the command
    # shown for a yes still runs.
    calls = scan_calls(tmp_path, {"app.py": ASKS_A_PERSON})
    assert calls == {
        ("app.py", 16): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 23): ("chat.completions.create", "required", ("R1",)),
    }


LOGGED_THEN_PASSED = """\
import logging
import subprocess

from openai import OpenAI

client = OpenAI()
logger = logging.getLogger(__name__)


def run_all(commands, log):
    for command in commands:
        log.info("running %s", command)
        subprocess.run(command, shell=True)


def chat(question, commands):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    logger.info("answer: %s", answer.choices[0].message.content)
    run_all(commands, logger)
"""


def test_a_logger_that_logged_the_answer_does_not_carry_it(tmp_path: Path) -> None:
    # khoj: ``logger.warning(f"... {item}")`` made the module's logger carry the answer into every later use
    # of it. Logging only shows the text; the logger handed on holds none of it.
    calls = scan_calls(tmp_path, {"app.py": LOGGED_THEN_PASSED})
    assert calls == {("app.py", 17): ("chat.completions.create", "autonomous", ("R11",))}


SENT_ON_A_SOCKET = """\
import subprocess

from openai import AsyncOpenAI

client = AsyncOpenAI()


async def run_all(websocket, commands):
    for command in commands:
        subprocess.run(command, shell=True)
        await websocket.send_text(f"ran {command}")


async def chat(websocket, question, commands):
    answer = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    await websocket.send_text(answer.choices[0].message.content)
    await run_all(websocket, commands)
"""


def test_a_socket_the_answer_was_sent_on_does_not_carry_it(tmp_path: Path) -> None:
    # khoj's chat over a WebSocket: ``websocket.send_text(event)`` made the socket carry the reply, and the
    # socket handed to event_generator carried it into every tool. A channel the answer is sent on
    # (send, emit, publish, notify) delivers it; it does not hold it for the channel's later uses.
    calls = scan_calls(tmp_path, {"app.py": SENT_ON_A_SOCKET})
    assert calls == {("app.py", 15): ("chat.completions.create", "autonomous", ("R11",))}
