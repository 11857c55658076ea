"""benchmarks/heldout.py: which reported call a label is matched to.

A model call written inside another one's arguments shares the outer call's
lines; its label must be matched to its own report (open-computer-use's
``action_model.call([..., Message(self.append_screenshot()), ...])``), and be
missed when only the outer call is reported.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import heldout

NESTED = '''\
import subprocess

from openai import OpenAI

client = OpenAI()


def describe(screen: str) -> str:
    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": screen}]).choices[0].message.content


def act(goal: str) -> None:
    reply = client.chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": goal},
            {"role": "user", "content": describe("the screen")},
        ],
    )
    subprocess.run(reply.choices[0].message.content, shell=True)
'''


def test_a_call_inside_another_calls_arguments_is_matched_to_its_own_report(tmp_path: Path) -> None:
    checkout = tmp_path / "checkouts" / "owner+nested"
    checkout.mkdir(parents=True)
    (checkout / "agent.py").write_text(NESTED)
    labels = tmp_path / "nested.json"
    labels.write_text(json.dumps({
        "repo": "owner/nested", "commit": "0" * 40, "scan": ".",
        "calls": [
            {"path": "agent.py", "line": 9, "mode": "autonomous", "why": "the description goes into act's prompt"},
            {"path": "agent.py", "line": 13, "mode": "required", "why": "the reply runs as a shell command"},
            {"path": "agent.py", "line": 17, "mode": "autonomous", "why": "describe's call site, inside the outer call's messages"},
        ],
    }))

    m = heldout.measure(labels, tmp_path / "checkouts", show=False)

    # The scan reports the outer request (13-19, required) and describe's call site (17,
    # autonomous); matching line 17 to the first report covering it took the outer one.
    assert (m["found"], m["agreed"], m["required_said"]) == (3, 3, 1)
    assert (m["reported"], m["true_reports"]) == (3, 3)


def _call(line: int, end: int, mode: str) -> dict:
    return {"path": "a.py", "line": line, "endLine": end, "mode": mode}


def _label(line: int) -> dict:
    return {"path": "a.py", "line": line, "mode": "autonomous"}


def test_a_label_inside_a_call_taken_by_its_own_label_is_missed() -> None:
    outer = _call(13, 19, "required")
    # Only the outer call is reported: the label on its line takes it, the one inside is missed.
    assert heldout.match([outer], [_label(13), _label(17)]) == [outer, None]
    # Whatever order the labels come in.
    assert heldout.match([outer], [_label(17), _label(13)]) == [None, outer]


def test_a_label_on_a_line_inside_one_call_only_is_still_found() -> None:
    # A label on a later line of a call the scan reports from its first line (a chained
    # `client.chat\n.completions.create(`) is found by the span, as before.
    call = _call(20, 24, "reviewed")
    assert heldout.match([call], [_label(21)]) == [call]
    # Among several calls covering it, the innermost.
    inner = _call(22, 22, "autonomous")
    assert heldout.match([call, inner], [_label(22)]) == [inner]
