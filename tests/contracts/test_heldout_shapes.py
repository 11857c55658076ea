"""Shapes the held-out repositories showed the scan missing or misjudging, each a small project.

Written from what real agent code does (a Runner object, Amazon Bedrock's converse, a
payment toolkit whose tools the code runs itself, a toolkit configured to read only);
the repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls


RUNNER_OBJECT = """\
from agents import Agent, Runner
from paypal_agent_toolkit.openai.toolkit import PayPalToolkit
from paypal_agent_toolkit.shared.configuration import Configuration

toolkit = PayPalToolkit("id", "secret", Configuration(actions={"orders": {"create": True, "capture": True}}))
agent = Agent(name="PayPal", tools=toolkit.get_tools())
runner = Runner()

async def main(prompt):
    result = await runner.run(agent, prompt)
    return result.final_output
"""


def test_a_runner_object_runs_its_agent_like_runner_run(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": RUNNER_OBJECT})
    assert calls == {("app.py", 10): ("agents.Runner.run", "required", ("R2",))}


READ_ONLY_KIT = """\
from langchain.agents import initialize_agent
from langchain_openai import ChatOpenAI
from paypal_agent_toolkit.langchain.toolkit import PayPalToolkit
from paypal_agent_toolkit.shared.configuration import Configuration

toolkit = PayPalToolkit(client_id="id", secret="s", configuration=Configuration(actions={"orders": {"get": True}, "invoices": {"list": True}}))
agent = initialize_agent(tools=toolkit.get_tools(), llm=ChatOpenAI())
print(agent.run("Where is my order?"))
"""


def test_a_toolkit_configured_to_read_only_reads(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": READ_ONLY_KIT})
    assert calls == {("app.py", 8): ("run", "sampled", ("R9",))}


BEDROCK = """\
import boto3
from paypal_agent_toolkit.bedrock.toolkit import PayPalToolkit, BedrockToolBlock

client = boto3.client(service_name="bedrock-runtime", region_name="us-west-2")
toolkit = PayPalToolkit(client_id="id", secret="s", configuration=None)

async def main(messages):
    response = client.converse(modelId="anthropic.claude", messages=messages, toolConfig={"tools": toolkit.get_tools()})
    for block in response["output"]["message"]["content"]:
        if block.get("toolUse"):
            call = BedrockToolBlock(toolUseId=block["toolUse"]["toolUseId"], name=block["toolUse"]["name"], input=block["toolUse"]["input"])
            await toolkit.handle_tool_call(call)

def other(session):
    s3 = boto3.client("s3")
    s3.converse(x=1)  # not Bedrock: no model here
"""


def test_bedrock_converse_is_a_model_call_and_the_toolkit_running_its_tool_moves_money(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": BEDROCK})
    assert calls == {("app.py", 8): ("converse", "required", ("R2", "R10"))}


ASSISTANT = """\
import json
from openai import OpenAI
from paypal_agent_toolkit.openai.toolkit import PayPalToolkit

toolkit = PayPalToolkit(client_id="id", secret="s", configuration=None)
paypal_api = toolkit.get_paypal_api()
client = OpenAI()

def run_agent(thread, assistant):
    run = client.beta.threads.runs.create(thread_id=thread.id, assistant_id=assistant.id)
    while run.status != "completed":
        run = client.beta.threads.runs.retrieve(thread_id=thread.id, run_id=run.id)
        if run.status == "requires_action":
            for tool_call in run.required_action.submit_tool_outputs.tool_calls:
                paypal_api.run(tool_call.function.name, json.loads(tool_call.function.arguments))
"""


def test_what_a_toolkit_hands_out_runs_its_tools_when_the_code_calls_it(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": ASSISTANT})
    assert calls[("app.py", 10)][:2] == ("beta.threads.runs.create", "required")
    assert "R2" in calls[("app.py", 10)][2]


SWARM = """\
import stripe
from swarm import Agent, Swarm
from swarm.repl import run_demo_loop


def refund_item(charge_id):
    \"\"\"Refund a charge.\"\"\"
    stripe.Refund.create(charge=charge_id)


def look_up(order_id):
    return f"order {order_id}"


refunds_agent = Agent(name="Refunds", functions=[refund_item])


def transfer_to_refunds():
    return refunds_agent


triage_agent = Agent(name="Triage", functions=[transfer_to_refunds, look_up])
helper_agent = Agent(name="Helper", functions=[look_up])

if __name__ == "__main__":
    run_demo_loop(triage_agent)


def ask(messages):
    return Swarm().run(agent=helper_agent, messages=messages).messages[-1]["content"]
"""


def test_a_swarm_run_reaches_the_tools_of_the_agents_its_functions_hand_off_to(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": SWARM})
    assert calls[("app.py", 26)] == ("run_demo_loop", "required", ("R2",))
    assert calls[("app.py", 30)][:2] == ("run", "autonomous")


WRAPPED_AGENT = """\
from agents import Agent, Runner

support_agent = Agent(name="Support", instructions="Answer the customer.")


async def run(items):
    return await Runner.run(support_agent, items)
"""
MAILER = """\
import smtplib


class Email:
    def __init__(self, to, body):
        self.to, self.body = to, body


class Emailer:
    async def process(self, respond):
        reply = await respond("the customer's mail")
        with smtplib.SMTP("localhost") as smtp_conn:
            smtp_conn.send_message(reply.body)

    async def run(self, respond):
        await self.process(respond)
"""
MAIN = """\
import support_agent
from emailer import Email, Emailer

emailer = Emailer()


async def respond(thread):
    output = await support_agent.run([thread])
    return Email(to="customer", body=output.final_output)


async def main():
    await emailer.run(respond)
"""


def test_a_wrapper_call_site_found_late_follows_a_callback_into_a_module_that_names_no_sdk(tmp_path: Path) -> None:
    # main.py names no SDK (found only as a caller of support_agent.run), nor does emailer.py:
    # the module main.py imports is parsed then, and the answer is mailed there.
    calls = scan_calls(tmp_path, {"support_agent.py": WRAPPED_AGENT, "emailer.py": MAILER, "main.py": MAIN})
    assert calls[("main.py", 8)][:2] == ("run", "required")
    assert "R5" in calls[("main.py", 8)][2]


PUBLIC_GET = """\
import httpx
import requests
from agno.agent import Agent
from agno.models.openai import OpenAIResponses

KEY = "k"

def top_stories(n: int) -> str:
    \"\"\"Fetch top stories.\"\"\"
    ids = httpx.get("https://hacker-news.firebaseio.com/v0/topstories.json").json()
    return str([httpx.get(f"https://hacker-news.firebaseio.com/v0/item/{i}.json").json() for i in ids[:n]])

def fetch_page(url: str) -> str:
    \"\"\"Fetch a page.\"\"\"
    response = requests.get(url, timeout=10)
    response.raise_for_status()
    return response.text

def account_balance(account: str) -> str:
    \"\"\"Fetch the account's balance.\"\"\"
    return requests.get(f"https://bank.example.com/{account}", headers={"Authorization": KEY}).text

public = Agent(model=OpenAIResponses(id="gpt-5-mini"), tools=[top_stories])
private = Agent(model=OpenAIResponses(id="gpt-5-mini"), tools=[account_balance, fetch_page])
print(public.run("Top stories?").content)
print(private.run("My balance?").content)
"""


def test_a_get_of_a_host_in_the_code_without_credentials_reads_public_pages(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": PUBLIC_GET})
    assert calls[("app.py", 25)][1:] == ("autonomous", ("R11",))
    assert calls[("app.py", 26)][1:] == ("sampled", ("R9",))


PAUSED_RUN = """\
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.run import RunContext, RunStatus
from agno.tools import tool
from agno.tools.user_feedback import UserFeedbackTools


@tool(requires_confirmation=True)
def add_to_watchlist(run_context: RunContext, symbol: str) -> str:
    \"\"\"Add a stock symbol to the user's watchlist.\"\"\"
    watchlist = run_context.session_state.get("watchlist", [])
    watchlist.append(symbol.upper())
    run_context.session_state["watchlist"] = watchlist
    return f"Added {symbol}"


@tool(requires_confirmation=True)
def add_to_crm(symbol: str) -> str:
    \"\"\"Add a stock symbol to the user's watchlist.\"\"\"
    return f"Added {symbol}"


watch = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[add_to_watchlist])
crm = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[add_to_crm])
plan = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[UserFeedbackTools()])

run = watch.run("Add AAPL")
if run.status != RunStatus.paused:
    print("no pause")
else:
    for requirement in run.active_requirements:
        if requirement.needs_confirmation:
            requirement.confirm()
print(crm.run("Add AAPL").content)

form = plan.run("Plan a vacation")
while form.is_paused:
    for requirement in form.active_requirements:
        if requirement.needs_user_feedback:
            for question in requirement.user_feedback_schema:
                if question.multi_select:
                    picked = input("numbers: ").split(",")
                else:
                    picked = [input("number: ")]
                requirement.provide_user_feedback({question.question: picked})
    form = plan.continue_run(run_id=form.run_id, requirements=form.requirements)

answer = plan.run("Pick one")
if answer.content == "refund":
    print("the model chose")
"""


def test_a_paused_runs_form_and_the_sessions_own_state_choose_and_write_nothing(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": PAUSED_RUN})
    assert calls[("app.py", 27)][1:] == ("autonomous", ("R11",))  # session state, pause status
    assert calls[("app.py", 34)][1:] == ("reviewed", ("R6",))  # the same words, a stand-in: its description decides
    assert calls[("app.py", 36)][1:] == ("autonomous", ("R11",))  # branches filling the human's form
    assert calls[("app.py", 48)][1:] == ("sampled", ("R10",))  # a branch on the answer itself


EXTERNAL_EXECUTION = """\
import subprocess
from datetime import datetime

from agno.agent import Agent
from agno.models.openai import OpenAIResponses
from agno.tools import tool


@tool(external_execution=True)
def execute_shell_command(command: str) -> str:
    \"\"\"Execute a shell command.\"\"\"
    return subprocess.check_output(command, shell=True).decode("utf-8")


def get_current_date() -> str:
    \"\"\"Get the current date and time.\"\"\"
    return datetime.now().strftime("%A, %B %d, %Y")


agent = Agent(model=OpenAIResponses(id="gpt-5-mini"), tools=[execute_shell_command, get_current_date])
run_response = agent.run("What files do I have?")
if run_response.is_paused:
    for requirement in run_response.active_requirements:
        if requirement.needs_external_execution:
            result = execute_shell_command.entrypoint(**requirement.tool_execution.tool_args)
            requirement.set_external_execution_result(result)
run_response = agent.continue_run(run_id=run_response.run_id, requirements=run_response.requirements)
print(run_response.content)

turns = agent.run("Which files?")
while turns.is_paused:
    for requirement in turns.active_requirements:
        execute_shell_command.entrypoint(**requirement.tool_execution.tool_args)
    turns = agent.continue_run(run_id=turns.run_id, requirements=turns.requirements)
"""


def test_an_external_execution_tool_is_judged_where_the_program_runs_it(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": EXTERNAL_EXECUTION})
    # The first run's call is executed by the program; the run continued after it is only printed.
    assert calls[("app.py", 21)][1:] == ("required", ("R1",))
    assert calls[("app.py", 27)][1:] == ("autonomous", ("R11",))
    # In a loop, the continued run's next call is executed on the next turn.
    assert calls[("app.py", 30)][1:] == ("required", ("R1",))
    assert calls[("app.py", 34)][1:] == ("required", ("R1",))


RAW_HTTP = """\
import json
import os

import requests

API = "https://api.anthropic.com/v1/messages"


class RouterModel:
    def __init__(self):
        self._api_url = "https://openrouter.ai/api/v1/chat/completions"

    def ask(self, messages):
        response = requests.post(self._api_url, headers={"Authorization": os.environ["KEY"]}, data=json.dumps({"messages": messages}))
        return response.json()


def describe(image):
    payload = {"model": "gpt-4o", "messages": [{"role": "user", "content": image}]}
    return requests.post("https://api.openai.com/v1/chat/completions", json=payload).json()


def claude(prompt):
    return requests.post(API, json={"messages": [{"role": "user", "content": prompt}]}).json()


def upload(data):
    return requests.post("https://example.com/v1/upload", json=data).json()
"""


def test_a_post_to_a_model_api_address_is_a_model_call(tmp_path: Path) -> None:
    # No SDK is imported: the endpoint's address in the text is what gets the file read.
    calls = scan_calls(tmp_path, {"models.py": RAW_HTTP})
    assert {key: value[0] for key, value in calls.items()} == {
        ("models.py", 14): "http.post", ("models.py", 20): "http.post", ("models.py", 24): "http.post",
    }


SERVED_SWARM = """\
from langchain.agents import create_agent
from langchain_openai import ChatOpenAI
from langgraph_swarm import create_handoff_tool, create_swarm

model = ChatOpenAI(model="gpt-4o")


def book_flight(flight_id: str) -> str:
    \"\"\"Book a flight.\"\"\"
    return "Successfully booked flight"


def search_flights(date: str) -> list:
    \"\"\"Search flights.\"\"\"
    return []


to_hotels = create_handoff_tool(agent_name="hotels", description="Transfer to the hotel assistant.")
to_flights = create_handoff_tool(agent_name="flights", description="Transfer to the flight assistant.")
flights = create_agent(model, tools=[search_flights, book_flight, to_hotels], name="flights")
hotels = create_agent(model, tools=[to_flights], name="hotels")
app = create_swarm([flights, hotels], default_active_agent="flights").compile()
unserved = create_swarm([hotels], default_active_agent="hotels").compile()
"""


def test_a_graph_named_in_langgraph_json_is_run_by_the_server_with_its_agents_tools(tmp_path: Path) -> None:
    (tmp_path / "langgraph.json").write_text('{"dependencies": ["."], "graphs": {"agent": "./src/agent/swarm.py:app"}}')
    calls = scan_calls(tmp_path, {"src/agent/swarm.py": SERVED_SWARM})
    assert calls == {("src/agent/swarm.py", 22): ("langgraph.json graph", "required", ("R2",))}


HAND_BUILT_GRAPH = """\
from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph

llm = ChatOpenAI(model="gpt-4o")


def triage(state):
    return {"answer": llm.invoke(state["messages"]).content}


builder = StateGraph(dict)
builder.add_node("triage", triage)
graph = builder.compile()
"""


def test_a_hand_built_graph_in_langgraph_json_is_reported_at_its_nodes_model_calls(tmp_path: Path) -> None:
    (tmp_path / "langgraph.json").write_text('{"graphs": {"main": "./graph.py:graph"}}')
    calls = scan_calls(tmp_path, {"graph.py": HAND_BUILT_GRAPH})
    assert [key for key in calls] == [("graph.py", 8)]


MADE_UP_READS = """\
from random import randrange
from typing import Annotated

from agent_framework import Agent, FunctionInvocationContext, tool
from agent_framework.openai import OpenAIChatClient

conditions = ["sunny", "cloudy", "raining"]
ORDERS = {"A1": "shipped"}


@tool
def get_weather(location: str) -> str:
    \"\"\"Get the current weather for a given location.\"\"\"
    print(f"weather for {location}")
    return f"The weather in {location} is {conditions[randrange(0, len(conditions))]}."


@tool
def get_time(timezone: str, ctx: FunctionInvocationContext) -> str:
    \"\"\"Get the current time.\"\"\"
    from datetime import datetime
    from zoneinfo import ZoneInfo

    user = ctx.kwargs.get("user_id", "unknown")
    return f"{user}: {datetime.now(ZoneInfo(timezone)).isoformat()}"


@tool
def factorial(n: int) -> str:
    \"\"\"Compute n!.\"\"\"
    result = 1
    for value in range(2, n + 1):
        result *= value
    return str(result)


@tool
def load_math_tools(ctx: FunctionInvocationContext) -> str:
    \"\"\"Load the math tools.\"\"\"
    ctx.add_tools([factorial])
    return "loaded"


@tool
def lookup_order(order_id: str) -> str:
    \"\"\"Find an order's status.\"\"\"
    return ORDERS.get(order_id, "unknown")


async def weather(question):
    agent = Agent(client=OpenAIChatClient(), tools=[get_weather, get_time, load_math_tools])
    print(await agent.run(question))


async def orders(question):
    agent = Agent(client=OpenAIChatClient(), tools=[lookup_order])
    print(await agent.run(question))
"""


def test_a_stand_in_that_makes_its_answer_up_reads_nothing(tmp_path: Path) -> None:
    # A weather stand-in picking at random, a clock reading the framework's injected context, a tool adding
    # a pure tool to the run: nothing read (R11). A stand-in looking a table up by the model's argument reads (R9).
    calls = scan_calls(tmp_path, {"app.py": MADE_UP_READS})
    assert calls == {
        ("app.py", 52): ("run", "autonomous", ("R11",)),
        ("app.py", 57): ("run", "sampled", ("R9",)),
    }


PAUSED_POLICY = """\
from agent_framework import Agent, Message, tool
from agent_framework.openai import OpenAIChatClient


@tool(approval_mode="always_require")
def close_ticket(ticket_id: str) -> str:
    \"\"\"Close a support ticket.\"\"\"
    return "closed"


def policy(request):
    name = request.function_call.name
    if name in {"close_ticket"}:
        return request.to_function_approval_response(approved=True)
    return request.to_function_approval_response(approved=False)


async def resolve(agent, response):
    result = response
    while result.user_input_requests:
        answers = [policy(request) for request in result.user_input_requests]
        result = await agent.run(Message(role="user", contents=answers))
    return result


async def main(question):
    agent = Agent(client=OpenAIChatClient(), tools=[close_ticket])
    result = await agent.run(question)
    result = await resolve(agent, result)
    print(result.text)
"""


def test_a_policy_answering_a_paused_runs_requests_chooses_nothing(tmp_path: Path) -> None:
    # The branch on the requested tool's name answers the framework's approval: no R10 at the
    # wrapper's call site, whose answer is only printed.
    calls = scan_calls(tmp_path, {"app.py": PAUSED_POLICY})
    assert calls[("app.py", 29)] == ("resolve", "autonomous", ("R11",))


NEW_SPEAKER = """\
from agent_framework import Agent
from agent_framework.openai import OpenAIChatClient


async def main(task):
    agent = Agent(client=OpenAIChatClient(), name="writer")
    last_id = None
    async for update in agent.run(task, stream=True):
        rid = update.response_id
        if rid != last_id:
            print(f"{update.author_name}:")
            last_id = rid
        print(update.text)
    async for chunk in agent.run(task, stream=True):
        if chunk.text != "done":
            print(chunk.text)
"""


def test_a_new_speaker_in_a_streamed_transcript_chooses_nothing(tmp_path: Path) -> None:
    # The value compared with the last one kept (and kept in the branch) says whether it changed;
    # compared with a value written in the code, it still chooses (R10).
    calls = scan_calls(tmp_path, {"app.py": NEW_SPEAKER})
    assert calls == {("app.py", 8): ("run", "autonomous", ("R11",)), ("app.py", 14): ("run", "sampled", ("R10",))}


OWN_STATE = """\
from agent_framework import Agent, FunctionInvocationContext, tool
from agent_framework.openai import OpenAIChatClient
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.workflow import Context
from llama_index.llms.openai import OpenAI
from llama_index.tools.tavily_research import TavilyToolSpec

search_web = TavilyToolSpec(api_key="k").to_tool_list()[0]


@tool(description="Store the findings so that other agents can reason over them.")
def store_findings(findings: str, ctx: FunctionInvocationContext) -> None:
    ctx.session.state["findings"] = findings


async def record_notes(ctx: Context, notes: str) -> str:
    \"\"\"Record notes on the topic.\"\"\"
    state = await ctx.get("state")
    state["notes"] = notes
    await ctx.set("state", state)
    return "Notes recorded."


async def main(question):
    agent = Agent(client=OpenAIChatClient(), tools=[store_findings])
    print(await agent.run(question))
    researcher = FunctionAgent(llm=OpenAI(model="gpt-4o-mini"), tools=[search_web, record_notes])
    print(await researcher.run(question))
"""


def test_tools_writing_only_the_runs_own_state_and_a_named_public_search_do_nothing(tmp_path: Path) -> None:
    # The session's state and the workflow's state are the run's own: what store_findings and
    # record_notes say they store goes there (no R6 by their names); a web search bound to a name reads public pages.
    calls = scan_calls(tmp_path, {"app.py": OWN_STATE})
    assert calls == {("app.py", 26): ("run", "autonomous", ("R11",)), ("app.py", 28): ("run", "autonomous", ("R11",))}


FROM_DICT = """\
import subprocess

from agent_framework import Agent, FunctionTool
from agent_framework.openai import OpenAIChatClient

definition = {"type": "function_tool", "name": "run", "description": "Run a command."}


def run(command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


async def main(question):
    def add(a, b) -> int:
        return a + b

    adder = FunctionTool.from_dict(definition, dependencies={"function_tool": {"name:add": {"func": add}}})
    print(await Agent(client=OpenAIChatClient(), tools=adder).run(question))
    shell = FunctionTool.from_dict(definition, dependencies={"function_tool": {"func": run}})
    print(await Agent(client=OpenAIChatClient(), tools=[shell]).run(question))
"""


def test_a_function_tool_from_a_dict_runs_the_function_it_is_given(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": FROM_DICT})
    assert calls[("app.py", 18)][1:] == ("autonomous", ("R11",))
    assert calls[("app.py", 20)][1:] == ("required", ("R1",))


# A coding agent holding its model and its environment as constructor parameters typed by
# protocols (mini-swe-agent's shape): the model class is chosen at run time, the environment
# runs the parsed actions in a shell. Scanned as the package folder itself (absolute imports).
CODER_PROTOCOLS = """\
from typing import Protocol


class Model(Protocol):
    def query(self, messages: list) -> dict: ...


class Environment(Protocol):
    def execute(self, action: dict) -> dict: ...
"""
CODER_MODEL = """\
import litellm


class LitellmModel:
    def _query(self, messages):
        return litellm.completion(model="gpt-4o", messages=messages)

    def query(self, messages):
        response = self._query(messages)
        message = dict(response.choices[0].message)
        message["actions"] = [{"command": message["content"]}]
        return message
"""
CODER_ENV = """\
import subprocess


class LocalEnvironment:
    def execute(self, action: dict) -> dict:
        done = subprocess.run(action["command"], shell=True, capture_output=True, text=True)
        return {"output": done.stdout}
"""
CODER_AGENT = """\
from coder import Environment, Model


class DefaultAgent:
    def __init__(self, model: Model, env: Environment):
        self.model = model
        self.env = env

    def step(self, messages):
        message = self.model.query(messages)
        return [self.env.execute(action) for action in message["actions"]]
"""


def test_a_model_and_an_environment_given_by_protocol_reach_the_shell(tmp_path: Path) -> None:
    package = tmp_path / "coder"
    calls = scan_calls(package, {
        "__init__.py": CODER_PROTOCOLS, "models/__init__.py": "", "models/litellm_model.py": CODER_MODEL,
        "environments/__init__.py": "", "environments/local.py": CODER_ENV, "agents/__init__.py": "", "agents/default.py": CODER_AGENT,
    })  # fmt: skip
    # The agent's call on the protocol is a call site of every model class's query; the answer's
    # actions reach subprocess through the environment class; the calls inside the model are given that.
    assert calls[("agents/default.py", 10)][:2] == ("Model.query", "required")
    assert calls[("models/litellm_model.py", 6)][1] == "required"
    assert calls[("models/litellm_model.py", 9)][:2] == ("LitellmModel._query", "required")


# A caller object given to a completion object by its constructor, typed by the concrete class,
# returning the answer with its token counts (Cover-Agent's shape).
CALLER = """\
import litellm


class AICaller:
    def call_model(self, prompt: str):
        response = litellm.completion(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content, response.usage.prompt_tokens
"""
COMPLETION = """\
import subprocess

from app.ai_caller import AICaller


class Completion:
    def __init__(self, caller: AICaller):
        self.caller = caller

    def fix_command(self, command: str) -> None:
        answer, _tokens = self.caller.call_model(f"Fix: {command}")
        subprocess.run(answer, shell=True)
"""


def test_a_caller_typed_by_its_class_is_a_wrapper_call_site(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app/__init__.py": "", "app/ai_caller.py": CALLER, "app/completion.py": COMPLETION})
    assert calls[("app/completion.py", 11)][:2] == ("AICaller.call_model", "required")
    assert calls[("app/ai_caller.py", 6)][1] == "required"


TYPED_SMOL_MODEL = """\
from smolagents.models import Model


def reformulate(question: str, model: Model) -> str:
    return model([{"role": "user", "content": question}]).content


class Inspector:
    def __init__(self, model: Model = None):
        self.model = model

    def caption(self, text):
        return self.model([{"role": "user", "content": text}]).content


def shout(model, text):
    return model(text)
"""


def test_a_smolagents_model_given_as_a_typed_parameter_is_called(tmp_path: Path) -> None:
    # model: Model is the base class of every smolagents model: calling it asks the model, also when
    # kept as self.model; an untyped parameter called is any callable.
    calls = scan_calls(tmp_path, {"app.py": TYPED_SMOL_MODEL})
    assert {key: value[0] for key, value in calls.items()} == {("app.py", 5): "__call__", ("app.py", 13): "__call__"}


# The model call bound to a name at import, one SDK or the other by configuration, called later
# (shell_gpt's shape); the answer runs as a shell command.
BOUND_COMPLETION = """\
import subprocess
from typing import Any, Callable

completion: Callable[..., Any] = lambda *args, **kwargs: None
if USE_LITELLM:
    import litellm

    completion = litellm.completion
else:
    from openai import OpenAI

    client = OpenAI()
    completion = client.chat.completions.create


def run(prompt):
    response = completion(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    subprocess.run(response.choices[0].message.content, shell=True)
"""


def test_a_model_call_bound_to_a_name_is_called_through_it(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": BOUND_COMPLETION})
    assert calls == {("app.py", 17): ("completion", "required", ("R1",))}


# A raw POST to the Responses API whose address is a local variable (openai-cua-sample-app's
# shape); the answer's command runs in a shell.
POSTED_FROM_A_VARIABLE = """\
import os
import subprocess

import requests


def create_response(**kwargs):
    url = "https://api.openai.com/v1/responses"
    headers = {"Authorization": f"Bearer {os.getenv('OPENAI_API_KEY')}"}
    response = requests.post(url, headers=headers, json=kwargs)
    return response.json()


def main():
    answer = create_response(model="gpt-4.1", input="the command")
    subprocess.run(answer["output_text"], shell=True)
"""


def test_a_post_to_a_model_address_held_in_a_local_variable_is_a_model_call(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": POSTED_FROM_A_VARIABLE})
    assert calls[("app.py", 10)][:2] == ("http.post", "required")
    assert calls[("app.py", 15)][:2] == ("create_response", "required")


# An agent class adding the hosted computer tool to its tool list with += in __init__
# (openai-cua-sample-app's Agent): the model's actions run on the computer.
TOOLS_ADDED_IN_INIT = """\
from openai import OpenAI

client = OpenAI()


class Agent:
    def __init__(self, computer, tools: list[dict] = []):
        self.computer = computer
        self.tools = tools
        self.tools += [{"type": "computer-preview", "display_width": 1024, "display_height": 768, "environment": "browser"}]

    def run_full_turn(self, items):
        response = client.responses.create(model="computer-use-preview", input=items, tools=self.tools, truncation="auto")
        return response.output
"""


def test_tools_added_with_plus_equals_are_the_agents_tools(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": TOOLS_ADDED_IN_INIT})
    assert calls[("app.py", 13)][:2] == ("responses.create", "required")
    assert "R1" in calls[("app.py", 13)][2]


# A streaming wrapper: the method yields each chunk's text (shell_gpt's get_completion); its
# caller joins the chunks and runs them as a shell command.
STREAMING_WRAPPER = """\
import subprocess

from openai import OpenAI

client = OpenAI()


class Handler:
    def get_completion(self, messages):
        response = client.chat.completions.create(model="gpt-4o", messages=messages, stream=True)
        for chunk in response:
            yield chunk.choices[0].delta.content or ""

    def run(self, prompt):
        command = "".join(self.get_completion([{"role": "user", "content": prompt}]))
        subprocess.run(command, shell=True)
"""


def test_a_generator_yielding_the_streamed_chunks_is_a_wrapper(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": STREAMING_WRAPPER})
    assert calls[("app.py", 15)][:2] == ("Handler.get_completion", "required")
    assert calls[("app.py", 10)][:2] == ("chat.completions.create", "required")


# The agents and their tools reached through star imports (the Swarm airline example's layout):
# main.py runs triage_agent, which hands off to an agent whose tool makes a refund.
STAR_TOOLS = """\
import stripe


def initiate_refund(charge_id):
    return stripe.Refund.create(charge=charge_id)
"""
STAR_AGENTS = """\
from configs.tools import *

from swarm import Agent


def transfer_to_refunds():
    return refunds_agent


triage_agent = Agent(name="Triage", functions=[transfer_to_refunds])
refunds_agent = Agent(name="Refunds", functions=[initiate_refund])
"""
STAR_MAIN = """\
from configs.agents import *
from swarm.repl import run_demo_loop

if __name__ == "__main__":
    run_demo_loop(triage_agent, debug=True)
"""


def test_an_agent_imported_with_a_star_runs_its_tools(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"configs/__init__.py": "", "configs/tools.py": STAR_TOOLS, "configs/agents.py": STAR_AGENTS, "main.py": STAR_MAIN})
    assert calls[("main.py", 5)][:2] == ("run_demo_loop", "required")


# The agent of a run looked up by name in a table of agents (openai-cs-agents-demo's server):
# any of them may run, the one whose tool refunds included.
AGENT_BY_NAME = """\
import stripe
from agents import Agent, Runner, function_tool


@function_tool
def refund(charge_id: str) -> str:
    return stripe.Refund.create(charge=charge_id).id


faq_agent = Agent(name="FAQ")
refunds_agent = Agent(name="Refunds", tools=[refund])
triage_agent = Agent(name="Triage", handoffs=[faq_agent, refunds_agent])


def _get_agent_by_name(name: str):
    agents = {faq_agent.name: faq_agent, refunds_agent.name: refunds_agent}
    return agents.get(name, triage_agent)


async def respond(state, items):
    result = await Runner.run(_get_agent_by_name(state.current_agent_name), items)
    return result.final_output
"""


def test_an_agent_picked_by_name_from_a_table_may_be_any_of_them(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": AGENT_BY_NAME})
    assert calls[("app.py", 21)][:2] == ("agents.Runner.run", "required")


# A subclass in another module overriding the private method its base calls (mini-swe-agent's
# LitellmTextbasedModel._query under LitellmModel.query); the agent runs the answer in a shell.
BASE_MODEL = """\
import litellm


class LitellmModel:
    def _query(self, messages):
        return litellm.completion(model="gpt-4o", messages=messages)

    def query(self, messages):
        response = self._query(messages)
        return response.choices[0].message.content
"""
TEXT_MODEL = """\
import litellm

from app.base import LitellmModel


class TextModel(LitellmModel):
    def _query(self, messages):
        return litellm.completion(model="gpt-4o-mini", messages=messages, temperature=0)
"""
RUNNER = """\
import subprocess

from app.base import LitellmModel


def step(model: LitellmModel, messages):
    command = model.query(messages)
    subprocess.run(command, shell=True)
"""


def test_an_override_of_a_base_classs_private_call_takes_the_bases_callers_evidence(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app/__init__.py": "", "app/base.py": BASE_MODEL, "app/text.py": TEXT_MODEL, "app/runner.py": RUNNER})
    assert calls[("app/runner.py", 7)][1] == "required"
    assert calls[("app/base.py", 6)][1] == "required"
    assert calls[("app/text.py", 8)][1] == "required"


# A model chosen at random by a method annotated with the model protocol (mini-swe-agent's
# roulette model): model.query on what it returns calls whichever model class is chosen.
PROTOCOL = """\
from typing import Protocol


class Model(Protocol):
    def query(self, messages) -> str: ...
"""
CHOSEN = """\
import litellm


class LitellmModel:
    def query(self, messages):
        return litellm.completion(model="gpt-4o", messages=messages).choices[0].message.content
"""
ROULETTE = """\
import random
import subprocess

from app import Model


class RouletteModel:
    def __init__(self, models):
        self.models = models

    def select_model(self) -> Model:
        return random.choice(self.models)

    def run(self, messages):
        model = self.select_model()
        subprocess.run(model.query(messages), shell=True)
"""


def test_a_model_returned_by_a_method_typed_with_the_protocol_is_queried(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app/__init__.py": PROTOCOL, "app/chosen.py": CHOSEN, "app/roulette.py": ROULETTE})
    assert calls[("app/roulette.py", 16)][:2] == ("Model.query", "required")


# A turn loop collecting the answer's items into a list started empty and returning it
# (openai-cua-sample-app's run_full_turn); its caller runs the last item's text.
COLLECTED = """\
import subprocess

from openai import OpenAI

client = OpenAI()


class Agent:
    def run_full_turn(self, items):
        new_items = []
        response = client.responses.create(model="gpt-4.1", input=items)
        new_items += response.output
        return new_items


def main(items):
    output = Agent().run_full_turn(items)
    subprocess.run(output[-1].content[0].text, shell=True)
"""


def test_a_list_started_empty_collecting_the_output_is_the_output(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": COLLECTED})
    assert calls[("app.py", 17)][:2] == ("Agent.run_full_turn", "required")


# One name bound to two agents in turn (smolagents' agent_from_any_llm.py): the second run is the
# CodeAgent's, which executes the Python the model writes; agents bound in alternative branches
# keep the flow-insensitive reading.
REBOUND_AGENT = """\
from smolagents import CodeAgent, LiteLLMModel, ToolCallingAgent, tool


@tool
def get_weather(location: str) -> str:
    '''Get the weather.

    Args:
        location: the place
    '''
    return "rain"


model = LiteLLMModel(model_id="gpt-4o")
agent = ToolCallingAgent(tools=[get_weather], model=model)
print(agent.run("Weather in Paris?"))
agent = CodeAgent(tools=[get_weather], model=model)
print(agent.run("Weather in Paris?"))
"""


def test_a_name_rebound_to_another_agent_runs_the_later_one_after_it(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": REBOUND_AGENT})
    assert calls[("app.py", 16)][1] != "required"
    assert calls[("app.py", 18)][1] == "required"


PROMPT_CACHING = """\
import subprocess
from anthropic import Anthropic

client = Anthropic()


def run_shell_command(command):
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


def chat(messages):
    response = client.beta.prompt_caching.messages.create(model="claude-3-5-sonnet", max_tokens=800, messages=messages)
    return run_shell_command(response.content[0].text)
"""


def test_the_prompt_caching_beta_is_a_model_call(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": PROMPT_CACHING})
    assert calls == {("app.py", 12): ("beta.prompt_caching.messages.create", "required", ("R1",))}


OLLAMA = """\
import subprocess
import ollama
from ollama import Client

client = ollama.AsyncClient()


async def step(messages):
    response = await client.chat(model="llava", messages=messages)
    subprocess.run(response["message"]["content"], shell=True)


def local(prompt):
    answer = Client(host="http://localhost:11434").generate(model="llama3", prompt=prompt)
    print(answer["response"])


def default(messages):
    print(ollama.chat(model="llama3", messages=messages)["message"]["content"])


def broken(messages):
    # An Ollama client has no messages.create: not a model call, whatever its shape.
    return client.messages.create(model="claude", max_tokens=10, messages=messages)
"""


def test_ollama_clients_and_module_are_model_calls(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": OLLAMA})
    assert calls == {
        ("app.py", 9): ("chat", "required", ("R1",)),
        ("app.py", 14): ("generate", "autonomous", ("R11",)),
        ("app.py", 19): ("ollama.chat", "autonomous", ("R11",)),
    }


OLLAMA_FACTORY = {
    "config.py": """\
from ollama import Client


class Config:
    def initialize_ollama(self):
        return Client(host="http://localhost:11434")
""",
    "apis.py": """\
import json
import ollama
from config import Config

config = Config()


def next_action(messages):
    model = config.initialize_ollama()
    response = model.chat(model="llava", messages=messages)
    return json.loads(response["message"]["content"])


def unrelated(store):
    return store.chat(room="general")  # no model named: not a model call
""",
}


def test_an_ollama_client_built_in_another_module_is_still_asked(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, OLLAMA_FACTORY)
    assert set(calls) == {("apis.py", 10)}
    assert calls["apis.py", 10][0] == "chat"


DESKTOP = {
    "apis.py": """\
import json
from openai import OpenAI

client = OpenAI()


def call_model(messages):
    response = client.chat.completions.create(model="gpt-4o", messages=messages)
    content = response.choices[0].message.content
    content = json.loads(content)
    return content


def get_next_action(messages):
    return call_model(messages), None
""",
    "desktop.py": """\
import pyautogui


class OperatingSystem:
    def write(self, content):
        for char in content:
            pyautogui.write(char)

    def mouse(self, detail):
        pyautogui.click(detail["x"], detail["y"])

    def size(self):
        return pyautogui.size()
""",
    "operate.py": """\
from apis import get_next_action
from desktop import OperatingSystem

operating_system = OperatingSystem()


def main(messages):
    while True:
        operations, _ = get_next_action(messages)
        if operate(operations):
            break


def operate(operations):
    for operation in operations:
        kind = operation.get("operation")
        if kind == "write":
            operating_system.write(operation.get("content"))
        elif kind == "click":
            operating_system.mouse(operation)
        elif kind == "done":
            return True
    return False
""",
}


def test_operations_typed_and_clicked_on_the_desktop_are_required(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, DESKTOP)
    assert {key: value[1] for key, value in calls.items()} == {
        ("apis.py", 8): "required", ("apis.py", 15): "required", ("operate.py", 9): "required",
    }
    for key in calls:
        assert "R1" in calls[key][2]


PIECES = {
    "apis.py": """\
import json
from openai import OpenAI

client = OpenAI()


def call_model(messages):
    response = client.chat.completions.create(model="gpt-4o", messages=messages)
    content = json.loads(response.choices[0].message.content)
    processed = []
    for operation in content:
        if operation.get("operation") == "click":
            operation["x"] = 0.5
        processed.append(operation)
    return processed


def ask_all(questions):
    answers = []
    for question in questions:
        answers.append(client.chat.completions.create(model="gpt-4o", messages=[question]).choices[0].message.content)
    return answers
""",
    "desktop.py": DESKTOP["desktop.py"],
    "operate.py": """\
from apis import ask_all, call_model
from desktop import OperatingSystem

operating_system = OperatingSystem()


def main(messages):
    for operation in call_model(messages):
        operating_system.write(operation.get("content"))
    print(ask_all(["a", "b"]))
""",
}


def test_a_list_started_empty_collecting_the_outputs_own_pieces_is_the_output(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, PIECES)
    # call_model returns the parsed operations again (a wrapper: its call site reported, its evidence
    # given back); ask_all returns a list of whole answers (built from outputs: not a wrapper).
    assert {key: value[1] for key, value in calls.items()} == {
        ("apis.py", 8): "required", ("apis.py", 21): "autonomous", ("operate.py", 8): "required",
    }


RECURSIVE = """\
import subprocess
from anthropic import Anthropic


class Assistant:
    def __init__(self):
        self.client = Anthropic()
        self.history = []

    def complete(self):
        response = self.client.messages.create(model="claude", max_tokens=800, messages=self.history)
        if response.stop_reason == "tool_use":
            self.history.append({"role": "user", "content": "tool result"})
            return self.complete()
        return response.content[0].text


def main():
    subprocess.run(Assistant().complete(), shell=True)
"""


def test_a_wrapper_calling_itself_again_is_a_call_site_too(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": RECURSIVE})
    assert {key: value[1] for key, value in calls.items()} == {
        ("app.py", 11): "required", ("app.py", 14): "required", ("app.py", 19): "required",
    }


NAMED_AFTER_CLASS = {
    "ai.py": """\
from litellm import completion
from utils import parse_code


class AI:
    def __init__(self, model="gpt-4o"):
        self.model_name = model

    def run(self, prompt):
        response = completion(model=self.model_name, messages=[{"role": "user", "content": prompt}])
        return response["choices"][0]["message"]["content"]
""",
    "utils.py": """\
import re


def parse_code(text):
    return re.findall(r"```(.*?)```", text, re.S)


def llm_run(prompt, globals):
    output = globals.ai.run(prompt)
    return output


def other(globals):
    return globals.store.run("nightly")  # no project wrapper class named Store: not a model call
""",
    "steps.py": """\
import subprocess
from utils import llm_run


def debug(error, globals):
    script = llm_run(f"Fix: {error}", globals)
    subprocess.run(["bash", "-c", script])
""",
}


def test_a_receiver_named_after_a_wrapper_class_calls_its_wrapper(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, NAMED_AFTER_CLASS)
    assert {key: (value[0], value[1]) for key, value in calls.items()} == {
        ("ai.py", 10): ("completion", "required"),
        ("utils.py", 9): ("AI.run", "required"),
        ("steps.py", 6): ("llm_run", "required"),
    }


MODAL = """\
import os
import modal
import openai

stub = modal.Stub("smol")


@stub.function(secret=modal.Secret.from_dotenv())
def generate_response(system_prompt, user_prompt):
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_prompt}]
    response = openai.ChatCompletion.create(model="gpt-4", messages=messages)
    return response["choices"][0]["message"]["content"]


def generate_file(filename, prompt):
    filecode = generate_response.call("write the file " + filename, prompt)
    return filename, filecode


def main(prompt, directory):
    names = generate_response.remote("list the files", prompt)
    for filename, filecode in generate_file.map(names.split(",")):
        with open(os.path.join(directory, filename), "w") as f:
            f.write(filecode)
"""


def test_a_modal_functions_remote_call_is_a_call_site_of_it(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": MODAL})
    assert set(calls) == {("app.py", 11), ("app.py", 16), ("app.py", 21), ("app.py", 22)}
    assert calls["app.py", 22][0] == "generate_file"


BROWSER_AGENT = """\
import openai
from playwright.sync_api import sync_playwright


class Crawler:
    def __init__(self):
        self.page = sync_playwright().start().chromium.launch().new_page()

    def scroll(self):
        self.page.evaluate("window.scrollBy(0, window.innerHeight)")

    def click(self, x, y):
        self.page.mouse.click(x, y)

    def type(self, x, y, text):
        self.click(x, y)
        self.page.keyboard.type(text)


crawler = Crawler()


def next_command(objective):
    response = openai.Completion.create(model="text-davinci-002", prompt=objective)
    return response.choices[0].text


def run(command):
    if command.startswith("SCROLL"):
        crawler.scroll()
    elif command.startswith("TYPE"):
        _, x, y, text = command.split(" ", 3)
        crawler.type(int(x), int(y), text)


while True:
    run(next_command("book a table"))
"""


def test_an_instance_of_a_module_class_driving_a_browser_page_is_followed_into(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"bot.py": BROWSER_AGENT})
    # The model's command types and clicks on a live page: the method's body is the evidence.
    assert calls["bot.py", 24][1] == "required"
    assert calls["bot.py", 37][1] == "required"
    assert "R1" in calls["bot.py", 24][2]


SCROLL_ONLY = BROWSER_AGENT.replace('elif command.startswith("TYPE")', 'elif command.startswith("NOTHING")').replace(
    "crawler.type(int(x), int(y), text)", "print(x, y, text)"
)


def test_a_browser_page_that_is_only_scrolled_is_not_code_execution(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"bot.py": SCROLL_ONLY})
    assert "R1" not in calls["bot.py", 24][2]


AUTOMODE = """\
from anthropic import Anthropic
from rich.console import Console

client = Anthropic()
console = Console()
EXIT_PHRASE = "AUTOMODE_COMPLETE"


def chat(text):
    reply = client.messages.create(model="claude-3-5-sonnet-latest", max_tokens=1024, messages=[{"role": "user", "content": text}])
    return reply.content[0].text


def automode(goal):
    running = True
    prompt = goal
    while running:
        response = chat(prompt)
        console.print(response)
        if EXIT_PHRASE in response:
            console.print("Automode completed.")
            running = False
        else:
            prompt = "Continue with the next step, or say AUTOMODE_COMPLETE."


def goals(items):
    for item in items:
        response = chat(item)
        if EXIT_PHRASE in response:
            done = True
            console.print("Exiting automode.", done)
            break
"""


def test_a_stop_phrase_that_only_ends_the_loop_chooses_nothing(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"eng.py": AUTOMODE})
    assert calls["eng.py", 10][1] == "autonomous"
    assert calls["eng.py", 18][1] == "autonomous"
    assert calls["eng.py", 29][1] == "autonomous"


def test_a_branch_that_ends_the_loop_and_does_something_else_is_still_a_choice(tmp_path: Path) -> None:
    text = AUTOMODE.replace('            running = False\n', '            running = False\n            save(response)\n')
    text += "\n\ndef save(text):\n    pass\n"
    calls = scan_calls(tmp_path, {"eng.py": text})
    assert calls["eng.py", 18][1] == "sampled"


SAME_NAME_ELSEWHERE = {
    "main.py": """\
import os
import openai


def generate_response(prompt):
    response = openai.ChatCompletion.create(model="gpt-4", messages=[{"role": "user", "content": prompt}])
    return response["choices"][0]["message"]["content"]


def main(directory):
    code = generate_response("write the app")
    with open(os.path.join(directory, "app.py"), "w") as f:
        f.write(code)
""",
    "debugger.py": """\
import openai


def generate_response(prompt):
    response = openai.ChatCompletion.create(model="gpt-4", messages=[{"role": "user", "content": prompt}])
    return response["choices"][0]["message"]["content"]


def main(error):
    print(generate_response("why does this fail: " + error))
""",
}


def test_a_call_of_a_modules_own_function_is_not_a_call_site_of_another_modules_namesake(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, SAME_NAME_ELSEWHERE)
    assert calls["main.py", 6][1] == "reviewed"  # its own caller writes the file
    assert calls["debugger.py", 5][1] == "autonomous"  # printed: main.py's write is another function's


CHAINS_OF_ANOTHER_CLASS = {
    "src/__init__.py": "",
    "src/agents.py": """\
from langchain_core.prompts import PromptTemplate
from langchain_groq import ChatGroq


class Agents:
    def __init__(self):
        llm = ChatGroq(model_name="llama-3.3-70b-versatile")
        self.categorize = PromptTemplate.from_template("{email}") | llm
        self.label = "support"
""",
    "src/nodes.py": """\
from .agents import Agents


class Nodes:
    def __init__(self):
        self.agents = Agents()

    def categorize(self, state):
        result = self.agents.categorize.invoke({"email": state["email"]})
        print(result.content)
        return state

    def named(self, state):
        return self.agents.label.upper()
""",
}


def test_a_chain_bound_by_a_class_of_another_module_is_asked_through_its_instance(tmp_path: Path) -> None:
    # self.agents = Agents(), Agents.__init__ binding self.categorize = prompt | llm: the email
    # agent's nodes ask each chain as self.agents.categorize.invoke(...); its plain attributes are no model.
    calls = scan_calls(tmp_path, CHAINS_OF_ANOTHER_CLASS)
    assert calls == {("src/nodes.py", 9): ("invoke", "autonomous", ("R11",))}


PIECES_JOINED = {
    "llm/__init__.py": "",
    "llm/provider.py": """\
from openai import OpenAI

client = OpenAI()


def chat(messages):
    response = client.chat.completions.create(model="gpt-4o", messages=messages)
    result = []
    choice = response.choices[0]
    if choice.message.content:
        result.append(choice.message.content)
    return "\\n".join(result), None


def history(messages):
    response = client.chat.completions.create(model="gpt-4o", messages=messages)
    turns = []
    turns.append(response.choices[0].message.content)
    return turns
""",
    "llm/run.py": """\
import subprocess

from .provider import chat, history


def run(messages):
    command, _usage = chat(messages)
    subprocess.run(command, shell=True)


def replay(messages):
    subprocess.run(history(messages)[0], shell=True)
""",
}


def test_the_answer_collected_in_a_list_and_joined_is_still_the_answer(tmp_path: Path) -> None:
    # gptme's provider chat(): result = []; result.append(choice.message.content); return "\n".join(result), usage.
    # The joined text is the answer, so the caller's shell command is the call's; a list returned as it is
    # is a list of answers, not a wrapper.
    calls = scan_calls(tmp_path, PIECES_JOINED)
    assert calls[("llm/provider.py", 7)][1:] == ("required", ("R1",))
    assert calls[("llm/run.py", 7)] == ("chat", "required", ("R1",))
    assert ("llm/run.py", 12) not in calls
    assert calls[("llm/provider.py", 16)][1] != "required"


KEY_PROBE = {
    "keys.py": """\
import requests


def anthropic_key_works(api_key):
    response = requests.post(
        "https://api.anthropic.com/v1/messages",
        headers={"x-api-key": api_key},
        json={"model": "claude-haiku-4-5", "max_tokens": 1, "messages": []},
    )
    return response.status_code != 401


def ask(api_key, question):
    response = requests.post(
        "https://api.anthropic.com/v1/messages",
        headers={"x-api-key": api_key},
        json={"model": "claude-haiku-4-5", "max_tokens": 200, "messages": [{"role": "user", "content": question}]},
    )
    return response.json()["content"][0]["text"]
""",
}


def test_a_request_whose_messages_are_written_empty_asks_the_model_nothing(tmp_path: Path) -> None:
    # gptme's API-key check posts {"messages": []} to the Anthropic endpoint and reads only the status:
    # no question, no answer to act on. The same endpoint asked a question stays a model call.
    calls = scan_calls(tmp_path, KEY_PROBE)
    assert set(calls) == {("keys.py", 14)}
    assert calls[("keys.py", 14)][0] == "http.post"


RECORD_RETURNED = {
    "agent/__init__.py": "",
    "agent/message.py": """\
from dataclasses import dataclass


@dataclass
class Message:
    role: str
    content: str
""",
    "agent/llm.py": """\
from openai import OpenAI

from .message import Message

client = OpenAI()


def reply(messages):
    response = client.chat.completions.create(model="gpt-4o", messages=messages)
    text = response.choices[0].message.content
    print(text)
    return Message("assistant", text)
""",
    "agent/chat.py": """\
import subprocess

from .llm import reply


def step(messages):
    msg = reply(messages)
    subprocess.run(msg.content, shell=True)
""",
}


def test_a_record_built_around_the_answer_and_returned_is_still_the_answer(tmp_path: Path) -> None:
    # gptme's reply(): return Message("assistant", response, metadata=metadata); step() in another
    # module runs the message's tool uses. The record holds the answer, so reply is a wrapper: its
    # call site is reported, and the shell command there is the provider call's evidence too.
    calls = scan_calls(tmp_path, RECORD_RETURNED)
    assert calls[("agent/chat.py", 7)] == ("reply", "required", ("R1",))
    assert calls[("agent/llm.py", 9)][1:] == ("required", ("R1",))


BASE_DISPATCH = {
    "agent/__init__.py": "",
    "agent/provider/__init__.py": "",
    "agent/provider/base_llm.py": """\
from abc import ABC, abstractmethod


class BaseLLM(ABC):
    async def aask(self, msg):
        return await self.acompletion_text([{"role": "user", "content": msg}])

    @abstractmethod
    async def acompletion_text(self, messages):
        ...
""",
    "agent/provider/openai_llm.py": """\
from openai import AsyncOpenAI

from .base_llm import BaseLLM


class OpenAILLM(BaseLLM):
    def __init__(self):
        self.client = AsyncOpenAI()

    async def acompletion_text(self, messages):
        rsp = await self.client.chat.completions.create(model="gpt-4o", messages=messages)
        return rsp.choices[0].message.content
""",
    "agent/context.py": """\
from agent.provider.registry import make_llm


class ContextMixin:
    @property
    def llm(self):
        return make_llm()
""",
    "agent/run_code.py": """\
import subprocess

from agent.context import ContextMixin


class RunCode(ContextMixin):
    async def run(self, task):
        code = await self.llm.aask(task)
        subprocess.run(code, shell=True)
""",
}


def test_a_base_class_call_of_a_method_a_subclass_implements_with_the_model_is_a_call_site(tmp_path: Path) -> None:
    # MetaGPT: BaseLLM.aask calls self.acompletion_text, which OpenAILLM (another module) implements with
    # the SDK; actions ask self.llm.aask(...) through a property of a mixin the scan cannot type. The base's
    # call is a call site of the subclass's wrapper, aask a wrapper in turn, and a receiver named after the
    # last word of the class (llm, BaseLLM) calls it: the shell command reaches the provider call.
    calls = scan_calls(tmp_path, BASE_DISPATCH)
    assert calls[("agent/provider/base_llm.py", 6)][0] == "BaseLLM.acompletion_text"
    assert calls[("agent/run_code.py", 8)] == ("BaseLLM.aask", "required", ("R1",))
    assert calls[("agent/provider/openai_llm.py", 11)][1:] == ("required", ("R1",))


TYPED_INTO_TERMINAL = {
    "wtf.py": """\
import litellm
from pynput.keyboard import Controller

keyboard = Controller()


def fix(error):
    for chunk in litellm.completion(model="gpt-4o", messages=[{"role": "user", "content": error}], stream=True):
        content = chunk.choices[0].delta.content
        if content:
            for char in content:
                keyboard.type(char)
""",
}


def test_keys_typed_by_pynput_from_the_answer_drive_the_desktop(tmp_path: Path) -> None:
    # open-interpreter's wtf: the suggested command is typed into the user's terminal with pynput's
    # keyboard Controller; Enter alone runs it. Like pyautogui, anything a person at the keyboard can do.
    calls = scan_calls(tmp_path, TYPED_INTO_TERMINAL)
    assert calls[("wtf.py", 8)][1:] == ("required", ("R1",))


BOUND_GENERATOR = {
    "oi/__init__.py": "",
    "oi/llm.py": """\
import litellm


def fixed_litellm_completions(**params):
    for attempt in range(3):
        try:
            yield from litellm.completion(**params)
            return
        except Exception:
            continue


class Llm:
    def __init__(self):
        self.completions = fixed_litellm_completions
""",
    "oi/run_text.py": """\
import subprocess


def run_text_llm(llm, params):
    for chunk in llm.completions(**params):
        subprocess.run(chunk.choices[0].delta.content, shell=True)
""",
}


def test_a_generator_yielding_from_the_stream_bound_to_an_attribute_is_a_wrapper_method(tmp_path: Path) -> None:
    # open-interpreter: fixed_litellm_completions yields from litellm.completion; Llm.__init__ binds it as
    # self.completions; run_text_llm(llm, params), in a module importing nothing of it, iterates
    # llm.completions(**params). The receiver is named after the class: a call site of Llm.completions.
    calls = scan_calls(tmp_path, BOUND_GENERATOR)
    assert calls[("oi/run_text.py", 5)] == ("Llm.completions", "required", ("R1",))
    assert calls[("oi/llm.py", 7)][1:] == ("required", ("R1",))


GEMINI_SUBCLASS = {
    "gemini_llm.py": """\
from google.generativeai.generative_models import GenerativeModel


class GeminiGenerativeModel(GenerativeModel):
    pass


class GeminiLLM:
    def __init__(self, model):
        self.llm = GeminiGenerativeModel(model_name=model)

    async def achat(self, messages):
        resp = await self.llm.generate_content_async(contents=messages)
        return resp.text
""",
}


def test_a_subclass_of_gemini_generative_model_imported_from_its_module_is_the_model(tmp_path: Path) -> None:
    # MetaGPT derives GeminiGenerativeModel from google.generativeai.generative_models.GenerativeModel,
    # the module that defines the class the package re-exports: the same model.
    calls = scan_calls(tmp_path, GEMINI_SUBCLASS)
    assert calls[("gemini_llm.py", 13)][0] == "generate_content_async"


STREAMED_DICTS = {
    "oi/__init__.py": "",
    "oi/llm.py": """\
import litellm

from oi.run_text import run_text_llm


def completions(**params):
    yield from litellm.completion(**params)


class Llm:
    def __init__(self, interpreter):
        self.interpreter = interpreter
        self.completions = completions

    def run(self, messages):
        yield from run_text_llm(self, {"model": "gpt-4o", "messages": messages, "stream": True})
""",
    "oi/run_text.py": """\
def run_text_llm(llm, params):
    inside = False
    for chunk in llm.completions(**params):
        content = chunk["choices"][0]["delta"].get("content", "")
        if "```" in content:
            inside = not inside
            continue
        if inside:
            yield {"type": "code", "format": "shell", "content": content}
        else:
            yield {"type": "message", "content": content}
""",
    "oi/respond.py": """\
import litellm


def respond(interpreter):
    try:
        for chunk in interpreter.llm.run(interpreter.messages):
            yield {"role": "assistant", **chunk}
    except litellm.exceptions.BudgetExceededError:
        return
""",
    "oi/core.py": """\
import subprocess

from oi.llm import Llm
from oi.respond import respond


class OpenInterpreter:
    def __init__(self):
        self.llm = Llm(self)
        self.messages = []

    def chat(self, message):
        self.messages.append({"role": "user", "type": "message", "content": message})
        yield from self._respond_and_store()

    def _respond_and_store(self):
        for chunk in respond(self):
            if chunk["type"] == "code":
                subprocess.run(chunk["content"], shell=True)
            yield chunk
""",
    "oi/terminal.py": """\
from oi.core import OpenInterpreter

interpreter = OpenInterpreter()


def main():
    while True:
        for chunk in interpreter.chat(input("> ")):
            print(chunk.get("content", ""), end="")
""",
}


def test_generators_yielding_dicts_built_from_the_stream_are_wrappers_all_the_way_up(tmp_path: Path) -> None:
    # open-interpreter: the provider's chunks become {"type": "code", "content": ...} dicts yielded by
    # run_text_llm, yielded on by Llm.run, re-yielded as {"role": "assistant", **chunk} by respond and
    # run by the chat loop in core.py; the terminal iterates chat(). A dict written around the answer is
    # a record of it, and a chain of five modules is followed to its end: every call site is reported.
    calls = scan_calls(tmp_path, STREAMED_DICTS)
    assert calls[("oi/run_text.py", 3)][:2] == ("Llm.completions", "required")
    assert calls[("oi/llm.py", 16)][:2] == ("run_text_llm", "required")
    assert calls[("oi/respond.py", 6)][:2] == ("Llm.run", "required")
    assert calls[("oi/core.py", 17)][:2] == ("respond", "required")
    assert calls[("oi/core.py", 14)][0] == "OpenInterpreter._respond_and_store"
    assert calls[("oi/terminal.py", 8)][0] == "OpenInterpreter.chat"
    assert calls[("oi/llm.py", 7)][1] == "required"


NESTED_CALLBACK = {
    "server.py": """\
import asyncio
import json

from anthropic import Anthropic

client = Anthropic()


def sampling_loop(messages):
    for event in client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=messages, stream=True):
        if event.type == "content_block_delta":
            yield {"type": "chunk", "chunk": event.delta.text}


async def main():
    messages = []

    async def stream_response():
        def on_output(text):
            chunk = f"data: {json.dumps({'content': text})}"
            yield chunk

        for chunk in sampling_loop(messages):
            print(chunk["chunk"])
        return on_output

    for chunk in sampling_loop(messages):
        if chunk["type"] == "chunk":
            print(chunk["chunk"], end="")


def run():
    asyncio.run(main())
""",
}


def test_a_nested_functions_own_variable_is_not_the_enclosing_ones(tmp_path: Path) -> None:
    # open-interpreter's computer-use server: main iterates the sampling loop's chunks, and a callback
    # nested in it binds a chunk of its own, which it yields. That yield is the callback's, of its own
    # string: main returns nothing of the model's, so asyncio.run(main()) is not a call site.
    calls = scan_calls(tmp_path, NESTED_CALLBACK)
    assert ("server.py", 23) in calls and ("server.py", 27) in calls
    assert ("server.py", 33) not in calls


DEAD_OLD_WAY = {
    "computer_ai.py": """\
import litellm


class Ai:
    def chat(self, text):
        response = ""
        for chunk in litellm.completion(model="gpt-4o", messages=[{"role": "user", "content": text}], stream=True):
            if chunk.choices[0].delta.content:
                response += chunk.choices[0].delta.content
        return response

        # Old way
        response = litellm.completion(model="gpt-4o", messages=[{"role": "user", "content": text}])
        return response.choices[0].message.content


def summarize(ai, page):
    print(ai.chat(f"Summarize: {page}"))
""",
}


def test_code_after_a_return_never_runs_and_does_not_unmake_the_answer_collected_before_it(tmp_path: Path) -> None:
    # open-interpreter's Ai.chat returns the streamed text and keeps its old body below the return: the
    # call there never runs (not reported), and its rebinding of response does not change what the
    # response += ... collected into a string started empty: chat is a wrapper still, summarize its caller.
    calls = scan_calls(tmp_path, DEAD_OLD_WAY)
    assert set(calls) == {("computer_ai.py", 7), ("computer_ai.py", 18)}
    assert calls[("computer_ai.py", 18)][0] == "Ai.chat"


CONVERSATION_RETURNED = {
    "eng/__init__.py": "",
    "eng/ai.py": """\
import openai


class AI:
    def __init__(self, model="gpt-4"):
        self.model = model

    def start(self, system, user):
        return self.next([{"role": "system", "content": system}, {"role": "user", "content": user}])

    def next(self, messages, prompt=None):
        if prompt:
            messages += [{"role": "user", "content": prompt}]
        response = openai.ChatCompletion.create(messages=messages, stream=True, model=self.model)
        chat = []
        for chunk in response:
            msg = chunk["choices"][0]["delta"].get("content", "")
            chat.append(msg)
        messages += [{"role": "assistant", "content": "".join(chat)}]
        return messages
""",
    "eng/steps.py": """\
import subprocess

from eng.ai import AI


def gen_entrypoint(ai: AI, workspace):
    messages = ai.start("Answer with the shell commands that run the code.", workspace)
    subprocess.run(messages[-1]["content"], shell=True)


def clarify(ai: AI, prompt):
    messages = ai.next([], prompt)
    print(messages[-1]["content"])
""",
    "eng/chat.py": """\
from anthropic import Anthropic

client = Anthropic()


def ask(history, question):
    history.append({"role": "user", "content": question})
    reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=history)
    history.append({"role": "assistant", "content": reply.content[0].text})
    return history


def main():
    print(ask([], "hello")[-1]["content"])
""",
}


def test_the_conversation_returned_with_the_answers_record_appended_carries_the_answer(tmp_path: Path) -> None:
    # gpt-engineer's AI.next streams the reply, joins the chunks and returns the conversation with
    # {"role": "assistant", "content": ...} added (+= or append): the steps read messages[-1]["content"].
    # The conversation carries the answer: next and start are wrappers, and the steps' calls are
    # call sites (the entry point's commands run in a shell).
    calls = scan_calls(tmp_path, CONVERSATION_RETURNED)
    assert calls[("eng/steps.py", 7)] == ("AI.start", "required", ("R1",))
    assert calls[("eng/steps.py", 12)][:2] == ("AI.next", "autonomous")
    assert calls[("eng/ai.py", 9)][0] == "AI.next"
    assert calls[("eng/chat.py", 14)][0] == "ask"


PARSED_IN_ANOTHER_MODULE = {
    "dog/__init__.py": "",
    "dog/parsing.py": """\
def parse_script(response):
    if response.count("```") < 2:
        return response, ""
    segments = response.split("```")
    script = "```".join(segments[1:-1]).strip()
    return segments[0], script


def count_words(response):
    return len(response.split())
""",
    "dog/llm_client.py": """\
from litellm import completion

from dog.parsing import count_words, parse_script


class LLMClient:
    def get_script(self, messages):
        response = completion(model="gpt-4o", messages=messages)
        return parse_script(response.choices[0].message.content)

    def measure(self, messages):
        response = completion(model="gpt-4o", messages=messages)
        return count_words(response.choices[0].message.content)
""",
    "dog/main.py": """\
import subprocess

from dog.llm_client import LLMClient


def run(prompt):
    llm_client = LLMClient()
    message, script = llm_client.get_script([{"role": "user", "content": prompt}])
    if script:
        subprocess.run(["python", "-c", script])
    print(llm_client.measure([{"role": "user", "content": prompt}]))
""",
}


def test_the_answer_handed_to_a_parser_of_another_module_and_returned_is_still_the_answer(tmp_path: Path) -> None:
    # rawdog: get_script returns parse_script(text), the message and the script split out of the reply in
    # parsing.py; the caller runs the script. The parser returns parts of its parameter, so get_script is a
    # wrapper and its call site is reported. A function returning a count computed from the answer is
    # no parser of it: measure's call site is not a model call.
    calls = scan_calls(tmp_path, PARSED_IN_ANOTHER_MODULE)
    assert calls[("dog/main.py", 8)] == ("LLMClient.get_script", "required", ("R1",))
    assert calls[("dog/llm_client.py", 8)][1] == "required"
    assert ("dog/main.py", 11) not in calls


INHERITED_WRAPPERS = {
    "sh/__init__.py": "",
    "sh/handler.py": """\
import subprocess

from openai import OpenAI

client = OpenAI()


class Handler:
    def get_completion(self, messages):
        for chunk in client.chat.completions.create(model="gpt-4o", messages=messages, stream=True):
            yield chunk.choices[0].delta.content or ""

    def _respond(self, prompt):
        return "".join(self.get_completion([{"role": "user", "content": prompt}]))
""",
    "sh/chat_handler.py": """\
import subprocess

from sh.handler import Handler


class ChatHandler(Handler):
    def get_completion(self, messages):
        yield from super().get_completion(messages)

    def run(self, prompt):
        subprocess.run(self._respond(prompt), shell=True)


def main(prompt):
    handler = ChatHandler()
    print(handler._respond(prompt))
""",
}


def test_a_subclass_in_another_module_calls_the_wrapper_methods_it_inherits(tmp_path: Path) -> None:
    # shell_gpt's ChatHandler.get_completion yields from super().get_completion(...), Handler's (another
    # module), though the class defines get_completion itself; open-interpreter's AsyncInterpreter calls
    # self._respond_and_store(), which it inherits from OpenInterpreter. Each is a call site of the base's
    # wrapper.
    calls = scan_calls(tmp_path, INHERITED_WRAPPERS)
    assert calls[("sh/chat_handler.py", 8)][0] == "Handler.get_completion"
    assert calls[("sh/chat_handler.py", 11)][:2] == ("Handler._respond", "required")
