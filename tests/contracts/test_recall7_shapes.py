"""Shapes of model calls the recall 7 round found the scan missing in held-out repositories, each a small project.

Written from what real agent code does (Agentless's and SeeAct's ``make_model`` / ``engine_factory``
returning one of several decoder classes, the answers picked out of a list of trajectories with a
comprehension); the repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

_DECODERS = """\
from abc import ABC, abstractmethod

from pkg.util.api import request_engine


class DecoderBase(ABC):
    def __init__(self, name):
        self.name = name

    @abstractmethod
    def codegen(self, message, num_samples=1):
        pass


class OpenAIDecoder(DecoderBase):
    def codegen(self, message, num_samples=1):
        ret = request_engine({"messages": [{"role": "user", "content": message}]})
        return [{"response": ret.choices[0].message.content}]


class ToolDecoder(DecoderBase):
    def codegen(self, message, num_samples=1):
        ret = request_engine({"messages": [{"role": "user", "content": message}], "model": "x"})
        return [{"response": ret.choices[0].message.content}]


def make_model(model, backend):
    if backend == "openai":
        return OpenAIDecoder(name=model)
    elif backend == "tool":
        return ToolDecoder(name=model)
    else:
        raise NotImplementedError
"""

FACTORY = {
    "pkg/__init__.py": "",
    "pkg/util/__init__.py": "",
    "pkg/util/api.py": """\
import openai


def request_engine(config):
    client = openai.OpenAI()
    ret = client.chat.completions.create(**config)
    return ret
""",
    "pkg/util/model.py": _DECODERS,
    "pkg/fl/__init__.py": "",
    "pkg/fl/localize.py": """\
import subprocess


class Localizer:
    def localize(self, message):
        from pkg.util.model import make_model

        model = make_model(model="gpt", backend="openai")
        traj = model.codegen(message, num_samples=1)[0]
        subprocess.run(traj["response"], shell=True)
""",
}


def test_a_factory_returning_one_of_its_modules_classes_hands_out_their_instances(tmp_path: Path) -> None:
    # Agentless's make_model(backend) returns OpenAIChatDecoder(...), AnthropicChatDecoder(...) or
    # DeepSeekChatDecoder(...) by branch, unannotated, and every stage calls model.codegen(...) on what it gets,
    # importing make_model inside the method. The factory's kind was the bare class name of its own module
    # ("object:OpenAIDecoder"), meaningless elsewhere, and it hid the call: now the classes it builds are
    # resolved where it is called, so the call is a call of each class's codegen, and the shell command run
    # there is the requests' evidence too.
    calls = scan_calls(tmp_path, FACTORY)
    # Named "model.codegen" by this rule alone; recall 6's factory rule (SWE-agent's get_model) names the
    # classes' base, "DecoderBase.codegen", when both are in: either way the call is found and required.
    callee, mode = calls[("pkg/fl/localize.py", 9)][:2]
    assert callee.endswith(".codegen") and mode == "required", (callee, mode)
    assert calls[("pkg/util/api.py", 6)][1] == "required"
    assert calls[("pkg/util/model.py", 17)][1] == "required"
    assert calls[("pkg/util/model.py", 23)][1] == "required"


PICKED_ANSWERS = {
    "app/__init__.py": "",
    "app/llm.py": """\
from openai import OpenAI


class Model:
    def __init__(self):
        self.client = OpenAI()

    def samples(self, message, n):
        response = self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": message}], n=n)
        responses = [choice.message.content for choice in response.choices]
        return [{"response": responses[0]}]
""",
    "app/fl.py": """\
from app.llm import Model


def localize(message):
    trajs = Model().samples(message, 3)
    outputs = [traj["response"] for traj in trajs]
    return outputs, {"raw_output": outputs}


def lengths(message):
    trajs = Model().samples(message, 3)
    sizes = [len(traj["response"]) for traj in trajs]
    return sizes
""",
    "app/main.py": """\
import subprocess

from app.fl import lengths, localize


def run(message):
    found, _ = localize(message)
    subprocess.run(found[0], shell=True)


def count(message):
    print(lengths(message))
""",
}


def test_a_comprehension_picking_each_answers_field_holds_the_answers(tmp_path: Path) -> None:
    # Agentless's localize steps: raw_outputs = [raw_traj["response"] for raw_traj in raw_trajs], returned
    # beside what was parsed of them. Each element is an answer's own field, as a list appended each answer's
    # piece is: localize is a wrapper, its call site a model call. A comprehension computing something of each
    # answer (len) builds something else: lengths() is no wrapper.
    calls = scan_calls(tmp_path, PICKED_ANSWERS)
    assert calls[("app/main.py", 7)][:2] == ("localize", "required")
    assert ("app/main.py", 12) not in calls


SOCIETY = {
    "app/__init__.py": "",
    "app/society.py": """\
from openai import OpenAI

client = OpenAI()


def run_society(task, round_limit=3):
    chat_history = []
    for _round in range(round_limit):
        response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
        _data = {
            "assistant": response.choices[0].message.content
            if response.choices
            else "",
            "round": _round,
        }
        chat_history.append(_data)
    answer = chat_history[-1]["assistant"]
    return answer, chat_history, {}


def prompts(task):
    chat_history = []
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    _data = {"role": "assistant", "content": response.choices[0].message.content}
    chat_history.append(_data)
    chat_history.append({"role": "user", "content": "and now?"})
    return chat_history
""",
    "app/main.py": """\
import subprocess

from app.society import prompts, run_society


def main(task):
    answer, history, info = run_society(task)
    subprocess.run(answer, shell=True)


def again(task):
    print(prompts(task))
""",
}


def test_a_record_named_first_then_appended_to_a_list_is_the_answers_record(tmp_path: Path) -> None:
    # OWL's run_society: _data = {"user": ..., "assistant": assistant_response.msg.content if ... else ""},
    # chat_history.append(_data), then answer = chat_history[-1]["assistant"] returned. Appending the dict
    # literal itself was read as the conversation holding the answer; a name bound to that dict is the same
    # record: run_society is a wrapper, its call site a model call. A user's turn appended after it still makes
    # the list the next prompt, not the answer's record.
    calls = scan_calls(tmp_path, SOCIETY)
    assert calls[("app/main.py", 7)][:2] == ("run_society", "required")
    assert ("app/main.py", 12) not in calls
