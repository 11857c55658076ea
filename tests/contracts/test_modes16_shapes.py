"""Held out, the modes 16 round: an object filled with the answer holds it from that statement on.

Written from what real agents do (AI-Scientist's launcher reads its baseline through a file handle
named like the one it writes the review to, and hands its aider coder to the review's improvement
after the writeup has run; AlphaCodium keeps each stage's answer in one problem dictionary): the
name's uses before the statement that fills it, outside a loop holding both, saw it without the
answer. The repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

FILLED_LATER = """\
import json
import subprocess

from openai import OpenAI

client = OpenAI()


def review(paper):
    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": paper}]).choices[0].message.content


def run_idea(folder, paper):
    with open(folder + "/baseline.json") as f:
        baseline = json.load(f)
    subprocess.run(["python", "experiment.py", "--runs", baseline["runs"]], check=True)
    verdict = review(paper)
    print(verdict)
    with open(folder + "/review.json", "w") as f:
        f.write(json.dumps(verdict))


def solve(problem):
    subprocess.run(["python", "-c", problem["code"]], check=True)
    answer = review(problem["description"])
    problem["notes"] = answer
    print(problem["notes"])


def looped(problem):
    for _ in range(3):
        subprocess.run(["python", "-c", problem["code"]], check=True)
        problem["code"] = review(problem["description"])
"""

STEPS = """\
import subprocess


def improve(review, coder):
    coder.run(f"Improve the text using the review: {review}")


def build(coder):
    subprocess.run(["make", "-C", coder.folder], check=True)
"""

IDEA = """\
from openai import OpenAI

from steps import build, improve

client = OpenAI()


def do_idea(coder, paper):
    build(coder)
    review = client.chat.completions.create(model="m", messages=[{"role": "user", "content": paper}]).choices[0].message.content
    improve(review, coder)
    print("done")
"""


def test_a_handle_or_a_dictionary_filled_with_the_answer_holds_it_from_there_on(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": FILLED_LATER})
    # f.write(json.dumps(verdict)): not the f an earlier with-block read the baseline through, whose
    # runs went to subprocess.run before the model was asked (the write itself is a name-only R6)
    assert calls[("app.py", 17)][1:] == ("reviewed", ("R6",))
    # problem["notes"] = answer: problem's code ran before the answer was put there
    assert calls[("app.py", 25)][1:] == ("autonomous", ("R11",))
    # in a loop, the next turn runs the code the answer became: still code execution
    assert calls[("app.py", 33)][1:] == ("required", ("R1",))
    # the wrapper serves that loop too
    assert calls[("app.py", 10)][1] == "required"


def test_an_object_handed_on_with_the_answer_holds_it_from_that_call_on(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"steps.py": STEPS, "app.py": IDEA})
    # build(coder) ran before improve(review, coder) gave the coder the review
    assert calls[("app.py", 10)][1:] == ("autonomous", ("R11",))


NEXT_SPEAKER = """\
from openai import OpenAI

client = OpenAI()


def ask(agent, messages):
    return client.chat.completions.create(model=agent, messages=messages).choices[0].message.content


def chat(messages, tool_editor, agent_creator):
    agent = tool_editor
    last_message = "What tools do you need?"
    while True:
        query = input(last_message)
        messages.append({"role": "user", "content": query})
        response = ask(agent, messages)
        if response.startswith("Case not resolved"):
            print("not yet:", response)
            agent = tool_editor
            last_message = "Any suggestions for the tools?"
            continue
        elif response.startswith("Case resolved"):
            agent = agent_creator
            print("done:", response)
            last_message = "Any suggestions for the agent?"
        else:
            raise ValueError(response)


def vote(messages):
    while True:
        choice = ask("m", messages)
        if choice.strip() == "yes":
            status = "approved"
        else:
            status = "rejected"
        print(status)
"""


def test_an_answer_choosing_which_agent_speaks_next_is_no_choice(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": NEXT_SPEAKER})
    # 'Case resolved' hands the loop to the agent creator: the next agent's run is judged at its call
    assert calls[("app.py", 16)][1:] == ("autonomous", ("R11",))
    # arms setting only words, no next speaker: still the answer choosing (and so the wrapper both use)
    assert calls[("app.py", 32)][1:] == ("sampled", ("R10",))
    assert calls[("app.py", 7)][1:] == ("sampled", ("R10",))
