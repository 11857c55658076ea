"""The answer handed back through wrappers the scan cannot name the class of (recall 3, 30 Nov).

Written from what real agent code does (TradingAgents' ``Reflector`` kept as ``self.reflector`` from an
untyped constructor parameter, its agent factories ``create_research_manager(llm)`` returning the graph
node they define; agent-zero's ``self.history.agent.call_utility_model(...)``); the repositories
themselves stay out of this repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

_REFLECTION = """\
from openai import OpenAI


class Reflector:
    def __init__(self, client):
        self.client = client or OpenAI()

    def reflect_on_final_decision(self, decision):
        response = self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": decision}])
        return response.choices[0].message.content

    def clear(self):
        response = self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "reset"}])
        return response.choices[0].message.content
"""

_SUMMARIES = """\
from openai import OpenAI


class Summarizer:
    def summarize_for_log(self, text):
        return OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])


class OtherSummarizer:
    def summarize_for_log(self, text):
        return text[:100]
"""

_GRAPH = """\
import subprocess


class TradingGraph:
    def __init__(self, reflector, summarizer):
        self.reflector = reflector
        self.digest = summarizer
        self.history = []

    def resolve(self, decision):
        command = self.reflector.reflect_on_final_decision(decision)
        subprocess.run(command, shell=True)

    def each(self, reflectors, decision):
        for item in reflectors:
            subprocess.run(item.reflect_on_final_decision(decision), shell=True)
        call_data = {"reflector": reflectors[0], "decision": decision}
        subprocess.run(call_data["reflector"].reflect_on_final_decision(call_data["decision"]), shell=True)

    def log(self, decision):
        subprocess.run(self.digest.summarize_for_log(decision), shell=True)
        subprocess.run(self.history.clear(), shell=True)

    def built(self, decision):
        self.judge = self.make_judge()
        subprocess.run(self.judge.reflect_on_final_decision(decision), shell=True)
"""


def test_a_wrapper_method_only_one_project_class_defines_is_called_on_any_receiver(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {
        "pkg/__init__.py": "", "pkg/reflection.py": _REFLECTION, "pkg/summaries.py": _SUMMARIES, "pkg/graph.py": _GRAPH,
    })  # fmt: skip
    # self.reflector (an untyped constructor parameter), a loop's item and a dict's entry: only Reflector defines
    # reflect_on_final_decision, so each calls it, and the command run with its answer makes the call
    # inside required.
    assert calls[("pkg/graph.py", 11)][:2] == ("Reflector.reflect_on_final_decision", "required")
    assert calls[("pkg/graph.py", 16)][:2] == ("Reflector.reflect_on_final_decision", "required")
    assert calls[("pkg/graph.py", 18)][:2] == ("Reflector.reflect_on_final_decision", "required")
    assert calls[("pkg/reflection.py", 9)][1] == "required"
    # Two classes define summarize_for_log (one asks no model): which one self.digest holds is unknown.
    # A list's clear() is no Reflector's, though Reflector.clear is the project's only def of it.
    assert ("pkg/graph.py", 21) not in calls
    assert ("pkg/graph.py", 22) not in calls
    assert calls[("pkg/reflection.py", 13)][1] == "autonomous"
    # self.judge holds what a call the scan cannot resolve built: an object it knows nothing of.
    assert ("pkg/graph.py", 26) not in calls


_AGENTS = """\
def create_research_manager(llm):
    def research_manager_node(state):
        response = llm.invoke(state["question"])
        return {"investment_plan": response.content, "sender": "Research Manager"}

    return research_manager_node
"""

_SMOKE = """\
import subprocess

from langchain_openai import ChatOpenAI

from pkg.agents import create_research_manager


def main():
    manager = create_research_manager(ChatOpenAI(model="gpt-4o"))
    result = manager({"question": "what to run?"})
    subprocess.run(result["investment_plan"], shell=True)
"""


def test_the_node_another_modules_factory_returns_asks_the_model_when_called(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"pkg/__init__.py": "", "pkg/agents.py": _AGENTS, "pkg/smoke.py": _SMOKE})
    # create_research_manager(llm) hands out the node it defines, which returns a record of the answer: calling
    # what it returned asks the model, and the plan run as a command makes the call inside required.
    assert calls[("pkg/smoke.py", 10)][:2] == ("create_research_manager()", "required")
    assert calls[("pkg/agents.py", 3)][1] == "required"


_TRADER = """\
import functools


def create_trader(llm):
    def trader_node(state, name):
        response = llm.invoke(state["plan"])
        return {"trader_investment_plan": response.content, "sender": name}

    return functools.partial(trader_node, name="Trader")
"""

_DESK = """\
import subprocess

from langchain_openai import ChatOpenAI

from pkg.trader import create_trader


def main():
    trader = create_trader(ChatOpenAI(model="gpt-4o"))
    result = trader({"plan": "buy"})
    subprocess.run(result["trader_investment_plan"], shell=True)
"""


def test_a_factory_handing_out_its_node_with_an_argument_bound_hands_out_the_node(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"pkg/__init__.py": "", "pkg/trader.py": _TRADER, "pkg/desk.py": _DESK})
    # functools.partial(trader_node, name="Trader"): calling it calls trader_node, which returns a record of
    # the answer; the plan run as a command makes the call inside required.
    assert calls[("pkg/desk.py", 10)][:2] == ("create_trader()", "required")
    assert calls[("pkg/trader.py", 6)][1] == "required"
