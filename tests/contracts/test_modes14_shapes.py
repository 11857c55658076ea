"""Held out, the modes 14 round: checks on the answer the labels do not count as a choice.

Written from what real agents do with an answer before using it (a title or summary checked for
blanks, a long reply walked through by its length); the repositories themselves stay out of this
repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

BLANKS = """\
from openai import OpenAI

client = OpenAI()


def title(conversation):
    name = client.chat.completions.create(model="m", messages=[{"role": "user", "content": conversation}]).choices[0].message.content
    if not name or not name.strip():
        name = "Untitled"
    print(name)


def summary(session):
    text = client.chat.completions.create(model="m", messages=[{"role": "user", "content": session}]).choices[0].message.content
    if not text or text.strip() == "":
        text = "No summary"
    print(text)


def pages(document):
    text = client.chat.completions.create(model="m", messages=[{"role": "user", "content": document}]).choices[0].message.content
    start = 0
    while start < len(text):
        print(text[start:start + 100])
        start += 100


def vote(question):
    choice = client.chat.completions.create(model="m", messages=[{"role": "user", "content": question}]).choices[0].message.content
    if choice.strip() == "yes":
        print("accepted")
"""


def test_a_check_for_blanks_or_a_walk_by_length_is_no_choice(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": BLANKS})
    assert calls[("app.py", 7)][1:] == ("autonomous", ("R11",))  # not name.strip(): a title or none
    assert calls[("app.py", 14)][1:] == ("autonomous", ("R11",))  # text.strip() == "": a summary or none
    assert calls[("app.py", 21)][1:] == ("autonomous", ("R11",))  # while start < len(text): printed in pages
    # the stripped answer compared with a word is still the answer choosing
    assert calls[("app.py", 29)][1:] == ("sampled", ("R10",))
