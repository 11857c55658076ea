"""A state graph's node returns the model's answer into the graph state; a router reads it.

Hand-written LangGraph shapes (the held-out sales outreach and support email agents
showed them): the node and the router live in one module, the graph is built in another.
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_files


def _calls(tmp_path: Path, files: dict[str, str]) -> dict[tuple[str, int], tuple[str, tuple[str, ...], tuple[str, ...]]]:
    result = scan_files(tmp_path, files)
    return {
        (c.location.path, c.location.line): (c.recommendation.mode, c.recommendation.rules, tuple(c.recommendation.reasons))
        for c in result.calls
    }


NODES = """\
from litellm import completion


def rate(profile):
    response = completion(model="groq/llama", messages=[{"role": "user", "content": profile}])
    return response.choices[0].message.content


class Nodes:
    @staticmethod
    def score(state):
        lead = state["lead"]
        lead.score = rate(lead.profile)
        return {"lead": lead}

    @staticmethod
    def summarise(state):
        summary = rate(state["lead"].profile)
        return {"summary": summary, "messages": []}

    @staticmethod
    def is_qualified(state):
        if int(state["lead"].score) > 50:
            return "qualified"
        state["messages"] = []
        return "not qualified"
"""

GRAPH = """\
from langgraph.graph import END, StateGraph
from nodes import Nodes

graph = StateGraph(dict)
graph.add_node("score", Nodes.score)
graph.add_node("summarise", Nodes.summarise)
graph.add_conditional_edges("score", Nodes.is_qualified, {"qualified": "summarise", "not qualified": END})
app = graph.compile()
"""


def test_a_state_key_a_router_reads_is_a_branch_on_the_output(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"nodes.py": NODES, "graph.py": GRAPH})
    mode, rules, reasons = calls[("nodes.py", 13)]
    assert (mode, rules) == ("sampled", ("R10",))
    assert any("is_qualified() reads state['lead']" in r for r in reasons)
    # the wrapper's own call follows the answer back into the node, and on to the router
    assert calls[("nodes.py", 5)][:2] == ("sampled", ("R10",))


def test_a_key_the_router_only_resets_or_no_router_reads_chooses_nothing(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"nodes.py": NODES, "graph.py": GRAPH})
    assert calls[("nodes.py", 18)][:2] == ("autonomous", ("R11",))


NOT_A_ROUTER = """\
from litellm import completion


def node(state):
    answer = completion(model="gpt-4o", messages=state["messages"]).choices[0].message.content
    return {"answer": answer}


def describe(state):
    if state["answer"]:
        return f"answered: {state['answer']}"
    return "nothing yet"
"""


def test_a_function_returning_built_text_is_no_router(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"app.py": NOT_A_ROUTER})
    assert calls[("app.py", 5)][:2] == ("autonomous", ("R11",))


NOTES = """\
import json
from litellm import completion


def write(profile, folder):
    email = completion(model="groq/llama", messages=[{"role": "user", "content": profile}]).choices[0].message.content
    with open("output.txt", "a") as file:
        file.write("Email:\\n\\n" + email)
    return email


def keep(profile, name):
    script = completion(model="groq/llama", messages=[{"role": "user", "content": profile}]).choices[0].message.content
    with open(name, "w") as file:
        file.write(script)


def record(profile):
    lead = completion(model="groq/llama", messages=[{"role": "user", "content": profile}]).choices[0].message.content
    with open("leads.json", "w") as file:
        file.write(lead)
"""


def test_text_appended_to_a_fixed_text_file_is_output_for_a_person(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"app.py": NOTES})
    assert calls[("app.py", 6)][:2] == ("autonomous", ("R11",))
    # a path from a parameter, or a data file another program loads, is still a write
    assert calls[("app.py", 13)][:2] == ("reviewed", ("R6",))
    assert calls[("app.py", 19)][:2] == ("reviewed", ("R6",))


STAND_INS = """\
from agents import Agent, Runner, function_tool


@function_tool
def initiate_refund(order_id: str) -> str:
    status = "Refund initiated"
    return status


@function_tool
def refund_policy(topic: str) -> str:
    '''Return the policy text for a topic.'''
    return "30 days"


refunds = Agent(name="refunds", tools=[initiate_refund])
policies = Agent(name="policies", tools=[refund_policy])


async def refund(question):
    return (await Runner.run(refunds, question)).final_output


async def explain(question):
    return (await Runner.run(policies, question)).final_output
"""


def test_a_stand_in_tool_without_a_description_stands_for_its_name(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"app.py": STAND_INS})
    mode, rules, reasons = calls[("app.py", 21)]
    assert (mode, rules) == ("required", ("R2",))
    assert "stands for what its name says" in reasons[0]
    # described as something else, the name alone stays a signal
    assert calls[("app.py", 25)][0] != "required"


TRIAGE = """\
from langchain_openai import ChatOpenAI

llm = ChatOpenAI()


async def triage_input(state, config):
    response = await llm.with_structured_output(dict).ainvoke(state["email"])
    return {"triage": response}


class Mailer:
    def __init__(self, db):
        self.db = db

    def write_reply(self, state):
        draft = llm.invoke(state["email"]).content
        return {"reply": draft}

    def save_reply(self, state):
        self.db.update_record(state["email"], state["reply"])
        return {}

    def send_reply(self, state):
        self.db.send_email(state["email"], state["reply"])
        return {}
"""

TRIAGE_GRAPH = """\
from langgraph.graph import END, StateGraph
from triage import Mailer, triage_input


def route_after_triage(state):
    if state["triage"]["response"] == "email":
        return "write_reply"
    return END


mailer = Mailer(None)
graph = StateGraph(dict)
graph.add_node(triage_input)
graph.add_node("write_reply", mailer.write_reply)
graph.add_node("save", mailer.save_reply)
graph.add_conditional_edges("triage_input", route_after_triage)
graph.add_edge("write_reply", "save")
app = graph.compile()
"""


def test_a_router_in_the_graph_module_reads_the_node_s_update(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"triage.py": TRIAGE, "graph.py": TRIAGE_GRAPH})
    mode, rules, reasons = calls[("triage.py", 7)]
    assert (mode, rules) == ("sampled", ("R10",))
    assert "route_after_triage() reads state['triage'] (in graph.py)" in reasons[0]


def test_a_node_of_the_same_graph_reading_the_answer_decides_its_fate(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"triage.py": TRIAGE, "graph.py": TRIAGE_GRAPH})
    # save_reply is a node of the graph: the reply is written; send_reply is no node, never run
    assert calls[("triage.py", 16)][:2] == ("reviewed", ("R6",))



GMAIL = """\
from googleapiclient.discovery import build


class Mail:
    def __init__(self, credentials):
        self.service = build("gmail", "v1", credentials=credentials)

    def draft(self, text):
        return self.service.users().drafts().create(userId="me", body={"message": {"raw": text}}).execute()

    def send(self, text):
        return self.service.users().messages().send(userId="me", body={"raw": text}).execute()

    def inbox(self, query):
        return self.service.users().messages().list(userId="me", q=query).execute()
"""

REPLIER = """\
from langchain_openai import ChatOpenAI
from mail import Mail

llm = ChatOpenAI()


class Replier:
    def __init__(self):
        self.mail = Mail(None)

    def draft_reply(self, question):
        self.mail.draft(llm.invoke(question).content)

    def send_reply(self, question):
        self.mail.send(llm.invoke(question).content)

    def search(self, question):
        self.mail.inbox(llm.invoke(question).content)
"""


def test_a_google_api_resource_method_says_what_the_request_does(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"mail.py": GMAIL, "app.py": REPLIER})
    assert calls[("app.py", 12)][:2] == ("reviewed", ("R6",))
    mode, rules, reasons = calls[("app.py", 15)]
    assert (mode, rules) == ("required", ("R5",))
    assert "Google API messages().send()" in reasons[0]
    assert calls[("app.py", 18)][:2] == ("autonomous", ("R11",))


SENDS = """\
from langchain_openai import ChatOpenAI
from langgraph.types import Command, Send

llm = ChatOpenAI()
KEYS = {"tone": "tone_prompt", "facts": "facts_prompt"}


def choose(state):
    response = llm.with_structured_output(dict).invoke(state["feedback"])
    return Command(goto=[Send("reflect", {"key": KEYS[t]}) for t in response["types"]])


def summarise(state):
    summary = llm.invoke(state["feedback"]).content
    return Command(goto="done", update={"summary": summary})
"""


def test_send_and_command_goto_built_from_the_answer_route_the_graph(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"app.py": SENDS})
    mode, rules, reasons = calls[("app.py", 9)]
    assert (mode, rules) == ("sampled", ("R10",))
    assert any("Send()" in r for r in reasons)
    # an update of the state beside a goto written in the code chooses nothing
    assert calls[("app.py", 14)][:2] == ("autonomous", ("R11",))
