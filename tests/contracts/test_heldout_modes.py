"""Modes the held-out repositories showed the scan misjudging (the modes 10 round), each a small project.

Written from what real agent code does (payment chatbots built on Coinbase AgentKit, an agent
built by a helper and handed back in a tuple, a parameter typed as the agent it is given);
the repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls


AGENTKIT = """\
from coinbase_agentkit import AgentKit, AgentKitConfig, {providers}
from coinbase_agentkit_langchain import get_langchain_tools
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

agentkit = AgentKit(AgentKitConfig(action_providers=[{listed}]))
agent = create_react_agent(ChatOpenAI(model="gpt-4o"), tools=get_langchain_tools(agentkit))
print(agent.invoke({{"messages": [("user", input())]}}))
"""


def test_agentkit_tools_do_what_their_action_providers_do(tmp_path: Path) -> None:
    wallet = AGENTKIT.format(providers="pyth_action_provider, wallet_action_provider", listed="pyth_action_provider(), wallet_action_provider()")
    prices = AGENTKIT.format(providers="pyth_action_provider", listed="pyth_action_provider()")
    tweets = AGENTKIT.format(providers="twitter_action_provider", listed="twitter_action_provider()")
    unknown = AGENTKIT.format(providers="acme_action_provider", listed="acme_action_provider()")
    calls = scan_calls(tmp_path, {"wallet.py": wallet, "prices.py": prices, "tweets.py": tweets, "unknown.py": unknown})
    assert calls == {
        ("wallet.py", 8): ("invoke", "required", ("R2",)),  # native_transfer sends the wallet's funds
        ("prices.py", 8): ("invoke", "sampled", ("R9",)),  # price feeds only
        ("tweets.py", 8): ("invoke", "required", ("R5",)),
        ("unknown.py", 8): ("invoke", "reviewed", ("R7",)),  # a provider the table does not know
    }


BUILT_AND_UNPACKED = """\
import subprocess

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


@tool
def run_shell(command: str) -> str:
    \"\"\"Run a shell command.\"\"\"
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


def initialize_agent(config):
    tools = [run_shell]
    return (create_react_agent(ChatOpenAI(model="gpt-4o"), tools=tools), config), {"thread_id": "1"}


def setup():
    (agent, _config), thread = initialize_agent({})
    return agent, thread


def chat(agent, thread):
    for chunk in agent.stream({"messages": [("user", input())]}, thread):
        print(chunk)


def main():
    agent, thread = setup()
    chat(agent, thread)
"""


def test_an_agent_handed_back_in_a_tuple_and_unpacked_keeps_its_tools(tmp_path: Path) -> None:
    # The agent a helper builds (tools named in the helper) reaches the run through two unpackings
    # and a parameter: its shell tool is what the run can do.
    calls = scan_calls(tmp_path, {"app.py": BUILT_AND_UNPACKED})
    assert calls == {("app.py", 25): ("stream", "required", ("R1",))}


TYPED_AGENT = """\
import subprocess

from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient


def run_shell(command: str) -> str:
    \"\"\"Run a shell command.\"\"\"
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


def setup() -> AssistantAgent:
    client = OpenAIChatCompletionClient(model="gpt-4o-mini")
    agent = AssistantAgent(name="assistant", model_client=client, tools=[run_shell])
    return agent


async def chat(agent: AssistantAgent) -> None:
    async for message in agent.run_stream(task=input()):
        print(message)


async def main() -> None:
    agent = setup()
    await chat(agent=agent)
"""


def test_a_parameter_typed_as_the_agent_it_is_given_has_that_agents_tools(tmp_path: Path) -> None:
    # "-> AssistantAgent" and "agent: AssistantAgent" say what kind of object it is; the agent built
    # and passed says what it can do.
    calls = scan_calls(tmp_path, {"app.py": TYPED_AGENT})
    assert calls == {("app.py", 19): ("run_stream", "required", ("R1",))}


HELPER_NAMES_THE_TOOLS = """\
import subprocess

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


@tool
def run_shell(command: str) -> str:
    \"\"\"Run a shell command.\"\"\"
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


def build():
    tools = [run_shell]
    return create_react_agent(ChatOpenAI(model="gpt-4o"), tools=tools)


agent = build()
print(agent.invoke({"messages": [("user", input())]}))
"""


def test_the_tools_a_helper_names_are_read_in_the_helper(tmp_path: Path) -> None:
    # tools=tools is the helper's own name, not one of the module where the agent runs.
    calls = scan_calls(tmp_path, {"app.py": HELPER_NAMES_THE_TOOLS})
    assert calls == {("app.py", 20): ("invoke", "required", ("R1",))}


TEAM_FROM_A_HELPER = """\
import subprocess

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient


def run_shell(command: str) -> str:
    \"\"\"Run a shell command.\"\"\"
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


async def get_team() -> RoundRobinGroupChat:
    client = OpenAIChatCompletionClient(model="gpt-4o-mini")
    writer = AssistantAgent(name="writer", model_client=client)
    runner = AssistantAgent(name="runner", model_client=client, tools=[run_shell])
    return RoundRobinGroupChat([writer, runner])


async def chat(task: str) -> None:
    team = await get_team()
    async for message in team.run_stream(task=task):
        print(message)
"""


def test_a_team_a_typed_helper_builds_runs_its_members_tools(tmp_path: Path) -> None:
    # "-> RoundRobinGroupChat" and the team it builds: the members are the helper's names.
    calls = scan_calls(tmp_path, {"app.py": TEAM_FROM_A_HELPER})
    assert calls == {("app.py", 22): ("run_stream", "required", ("R1",))}


TITLE = """\
import logging
import os

from openai import OpenAI

client = OpenAI()
logger = logging.getLogger(__name__)


def title(conversation: str, taken: set[str]) -> str | None:
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": conversation}])
    name = reply.choices[0].message.content.strip()
    end = name.find("</think>")
    if end != -1:
        name = name[end + len("</think>"):].strip()
    elif "<think>" in name:
        logger.warning("incomplete think tag")
        return None
    if " " in name:
        raise ValueError(f"not a title: {name}")
    if name not in taken:
        return name
    return None


def route(conversation: str) -> str:
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": conversation}])
    verdict = reply.choices[0].message.content
    if "refund" in verdict:
        return "refunds"
    return "general"


def clean(conversation: str) -> None:
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": conversation}])
    verdict = reply.choices[0].message.content
    if "tmp" in verdict:
        os.remove("/tmp/cache")
"""


def test_a_check_whose_arms_only_trim_return_or_reject_the_answer_chooses_nothing(tmp_path: Path) -> None:
    # title(): each check only trims the answer, hands it (or None) back, logs or raises: free text.
    # route() hands back a route name of its own, clean() deletes in its branch: both are choices.
    calls = scan_calls(tmp_path, {"app.py": TITLE})
    assert calls == {
        ("app.py", 11): ("chat.completions.create", "autonomous", ("R11",)),
        ("app.py", 27): ("chat.completions.create", "sampled", ("R10",)),
        ("app.py", 35): ("chat.completions.create", "required", ("R3", "R10")),
    }


PARSED_BY_ITS_SCHEMA = """\
from openai import OpenAI

client = OpenAI()


def optimized_schema(model: type) -> dict:
    schema = model.model_json_schema()
    if "$defs" in schema:
        schema.pop("$defs")
    return schema


def ask(question: str, output_format: type):
    schema = optimized_schema(output_format)
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": question}], response_format={"type": "json_schema", "json_schema": schema}
    )
    return output_format.model_validate_json(reply.choices[0].message.content)
"""


def test_a_class_parsing_the_answer_does_not_carry_it(tmp_path: Path) -> None:
    # output_format.model_validate_json(answer) builds a new object; the class (and the schema built
    # from it before the request) does not carry the answer, so the schema's branches decide nothing.
    calls = scan_calls(tmp_path, {"app.py": PARSED_BY_ITS_SCHEMA})
    assert calls == {("app.py", 15): ("chat.completions.create", "autonomous", ("R11",))}


COPIED_IN_A_LOOP = """\
from coinbase_agentkit import AgentKit, AgentKitConfig, wallet_action_provider
from coinbase_agentkit_strands_agents import get_strands_tools
from strands import Agent
from strands_tools import generate_image


def build() -> Agent:
    agentkit = AgentKit(AgentKitConfig(action_providers=[wallet_action_provider()]))
    kit_tools = get_strands_tools(agentkit)
    tools = []
    for each in kit_tools:
        each.tool_spec["description"] = each.tool_spec["description"].strip()
        tools.append(each)
    return Agent(tools=[*tools])


agent = build()
agent(input())
artist = Agent(tools=[generate_image])
artist(input())
"""


def test_tools_appended_one_by_one_from_a_loop_are_the_loops_tools(tmp_path: Path) -> None:
    # for each in kit_tools: tools.append(each): tools holds what kit_tools holds (money, here).
    calls = scan_calls(tmp_path, {"app.py": COPIED_IN_A_LOOP})
    assert calls[("app.py", 18)] == ("__call__", "required", ("R2",))


def test_strands_generate_image_makes_the_programs_output(tmp_path: Path) -> None:
    # Strands' generate_image makes pictures saved under output/ as the program's output: nothing read or changed.
    calls = scan_calls(tmp_path, {"app.py": COPIED_IN_A_LOOP})
    assert calls[("app.py", 20)] == ("__call__", "autonomous", ("R11",))


NO_TOOLS = """\
from openai import OpenAI

client = OpenAI()


def complete(messages: list, model: str, tools: list | None) -> str:
    kwargs = {"tools": tools} if tools else {}
    reply = client.chat.completions.create(model=model, messages=messages, **kwargs)
    return reply.choices[0].message.content


def check(model: str) -> None:
    print(complete([{"role": "user", "content": "Reply with exactly: OK"}], model, tools=None))
"""


def test_tools_none_is_no_tools(tmp_path: Path) -> None:
    # tools=None at the wrapper's call site offers nothing: not "tools only known at run time".
    calls = scan_calls(tmp_path, {"app.py": NO_TOOLS})
    assert calls[("app.py", 13)] == ("complete", "autonomous", ("R11",))


NOTEBOOK_EXECUTOR = """\
import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell


class NotebookRunner:
    def __init__(self) -> None:
        self.nb = nbformat.v4.new_notebook()
        self.client = NotebookClient(self.nb)

    def add_code_cell(self, code: str) -> None:
        self.nb.cells.append(new_code_cell(source=code))

    async def run(self, code: str) -> str:
        self.add_code_cell(code)
        await self.client.async_execute_cell(self.nb.cells[-1], len(self.nb.cells) - 1)
        return str(self.nb.cells[-1].outputs)
"""

ANALYST = """\
from openai import AsyncOpenAI

from executor import NotebookRunner

client = AsyncOpenAI()


class Analyst:
    def __init__(self) -> None:
        self.runner = NotebookRunner()

    async def step(self, task: str) -> str:
        reply = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
        return await self.runner.run(reply.choices[0].message.content)
"""


def test_code_put_in_a_notebook_cell_a_jupyter_kernel_runs_is_executed(tmp_path: Path) -> None:
    # MetaGPT's Data Interpreter: the code becomes an nbformat code cell that nbclient executes.
    calls = scan_calls(tmp_path, {"executor.py": NOTEBOOK_EXECUTOR, "analyst.py": ANALYST})
    assert calls == {("analyst.py", 13): ("chat.completions.create", "required", ("R1",))}


SHELL_RUNNER = """\
import subprocess


class ShellRunner:
    def run(self, command: str) -> str:
        return subprocess.run(command, shell=True, capture_output=True, text=True).stdout
"""

PYDANTIC_ROLE = """\
from openai import OpenAI
from pydantic import BaseModel, Field

from runner import ShellRunner

client = OpenAI()


class Operator(BaseModel):
    runner: ShellRunner = Field(default_factory=ShellRunner, exclude=True)

    def step(self, task: str) -> str:
        reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
        return self.runner.run(reply.choices[0].message.content)
"""


def test_a_field_declared_with_its_class_holds_that_class(tmp_path: Path) -> None:
    # "runner: ShellRunner = Field(default_factory=ShellRunner)": the annotation says what self.runner is.
    calls = scan_calls(tmp_path, {"runner.py": SHELL_RUNNER, "operator_role.py": PYDANTIC_ROLE})
    assert calls == {("operator_role.py", 13): ("chat.completions.create", "required", ("R1",))}


def test_filing_a_message_changes_the_mailbox_and_sends_nothing() -> None:
    # mark_email_as_read, label_message: a reversible write to the mailbox (R6), not a message sent (R5).
    from escalated.contracts import rules

    assert [f.rule for f in rules.classify_name("mark_email_as_read", line=1)] == ["R6"]
    assert [f.rule for f in rules.classify_name("label_message", line=1)] == ["R6"]
    assert [f.rule for f in rules.classify_name("send_email", line=1)] == ["R5"]
    assert [f.rule for f in rules.classify_name("reply_email", line=1)] == ["R5"]


def test_a_reply_to_the_human_running_the_agent_is_no_message_sent_for_someone() -> None:
    # reply_to_human, ask_human (MetaGPT's RoleZero): the answer goes to the person using the agent.
    from escalated.contracts import rules

    assert rules.classify_name("reply_to_human", line=1) == []
    assert rules.classify_name("ask_human", line=1) == []
    assert [f.rule for f in rules.classify_name("reply_to_customer", line=1)] == ["R5"]


# -- modes 11 ----------------------------------------------------------------------------------

PLAN_THEN_CODE = """\
import subprocess

from openai import OpenAI

client = OpenAI()


def ask(prompt):
    return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}]).choices[0].message.content


def main(task):
    plan = ask(f"Plan the steps of: {task}")
    code = ask(f"Write a Python script for this plan:\\n{plan}")
    subprocess.run(["python", "-c", code])
"""


def test_an_answer_put_into_the_next_request_is_that_requests_prompt(tmp_path: Path) -> None:
    # devika's planner and researcher, MetaGPT's plans: the plan becomes the coder's prompt; what runs is the
    # coder's answer, judged at the coder's call. The plan's own call reaches nothing.
    calls = scan_calls(tmp_path, {"agent.py": PLAN_THEN_CODE})
    assert calls[("agent.py", 13)][1] == "autonomous"
    assert calls[("agent.py", 14)][1:] == ("required", ("R1",))
    assert calls[("agent.py", 9)][1] == "required"  # the request itself serves the coder


STATE_AND_MESSAGES = {
    "state.py": """\
from sqlmodel import Session


class AgentState:
    def __init__(self, engine):
        self.engine = engine

    def add_to_current_state(self, project, state):
        with Session(self.engine) as session:
            session.add(state)
            session.commit()


class Tickets:
    def __init__(self, engine):
        self.engine = engine

    def add_note_to_ticket(self, ticket, note):
        with Session(self.engine) as session:
            session.add(note)
            session.commit()
""",
    "agent.py": """\
from openai import OpenAI

from state import AgentState, Tickets

client = OpenAI()


class Agent:
    def __init__(self, engine):
        self.agent_state = AgentState(engine)
        self.tickets = Tickets(engine)

    def think(self, project, prompt):
        thought = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}]).choices[0].message.content
        self.agent_state.add_to_current_state(project, thought)

    def note(self, ticket, prompt):
        note = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}]).choices[0].message.content
        self.tickets.add_note_to_ticket(ticket, note)
""",
}


def test_the_agents_own_state_and_messages_are_no_system_of_record(tmp_path: Path) -> None:
    # devika's add_to_current_state and add_message_from_devika: the agent's state stack and chat log,
    # kept in its own database; a note added to a ticket is still a write to a record.
    calls = scan_calls(tmp_path, STATE_AND_MESSAGES)
    assert calls[("agent.py", 14)][1:] == ("autonomous", ("R11",))
    assert calls[("agent.py", 18)][1:] == ("reviewed", ("R6",))


VALIDATED = """\
from openai import OpenAI

client = OpenAI()


def validate_response(response):
    if "response" not in response:
        return False
    else:
        return response["response"]


def answer(question):
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}]).choices[0].message.content
    return validate_response(response)


def should_stop(question):
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}]).choices[0].message.content
    if "DONE" in response:
        return False
    return True
"""


def test_a_validator_returning_false_or_the_answer_chooses_nothing(tmp_path: Path) -> None:
    # devika's validate_response: False refuses the answer (the retry decorator asks again), else the
    # answer's field is handed back; an answer turned into True or False is still a choice.
    calls = scan_calls(tmp_path, {"agent.py": VALIDATED})
    assert calls[("agent.py", 14)][1] == "autonomous"
    assert calls[("agent.py", 19)][1:] == ("sampled", ("R10",))


NORMALISED = """\
from openai import OpenAI

client = OpenAI()


def normalise(parsed):
    parsed = [parsed] if parsed.strip() else []
    return [item.strip() for item in parsed]


def sub_queries(question):
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}]).choices[0].message.content
    return normalise(response)


def route(question):
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}]).choices[0].message.content
    return ["search"] if "search" in response else []
"""


def test_the_answer_or_nothing_of_it_handed_back_chooses_nothing(tmp_path: Path) -> None:
    # gpt-researcher's sub-queries: [parsed] if parsed.strip() else [] hands back the answer or nothing;
    # a route name written in the code is still a choice.
    calls = scan_calls(tmp_path, {"agent.py": NORMALISED})
    assert calls[("agent.py", 12)][1] == "autonomous"
    assert calls[("agent.py", 17)][1:] == ("sampled", ("R10",))


SENT_EVENTS = """\
import subprocess

from openai import AsyncOpenAI

client = AsyncOpenAI()


async def event_generator(query, command):
    async def send_event(kind, data):
        yield f"{kind}: {data}"

    async for status in send_event("status", command):
        subprocess.run(status, shell=True)
    stream = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": query}], stream=True)
    async for chunk in stream:
        async for event in send_event("message", chunk.choices[0].delta.content):
            yield event


async def fix(code):
    async def fenced(text):
        return text.strip("`")

    answer = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": code}])
    script = await fenced(answer.choices[0].message.content)
    subprocess.run(script, shell=True)
"""


def test_a_function_handing_back_what_it_was_given_hands_it_back_to_that_call_only(tmp_path: Path) -> None:
    # khoj's chat stream: each chunk goes through send_event, whose other call sites carry the
    # operator's and the code tool's events; what send_event hands back goes back to the call that
    # passed the chunk, not to every call of send_event. Handed back to the call that passed it, it still counts.
    calls = scan_calls(tmp_path, {"app.py": SENT_EVENTS})
    assert calls[("app.py", 14)][1] == "autonomous"
    assert calls[("app.py", 24)][1:] == ("required", ("R1",))


ACTIONS = {
    "pkg/__init__.py": "",
    "pkg/action.py": """\
from openai import AsyncOpenAI


class Action:
    def __init__(self):
        self.llm = AsyncOpenAI()

    async def _aask(self, prompt):
        rsp = await self.llm.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
        return rsp.choices[0].message.content
""",
    "pkg/execute.py": """\
import subprocess

from pkg.action import Action


class ExecuteCode(Action):
    async def run(self, code):
        return subprocess.run(["python", "-c", code], capture_output=True).stdout
""",
    "pkg/write.py": """\
from pkg.action import Action


class WriteCode(Action):
    async def run(self, goal):
        return await self._aask(goal)
""",
    "pkg/role.py": """\
from pkg.execute import ExecuteCode
from pkg.write import WriteCode


class Analyst:
    def __init__(self):
        self.write_code = WriteCode()
        self.execute_code = ExecuteCode()

    async def act(self, goal):
        code = await self.write_code.run(goal)
        return await self.execute_code.run(code)

    async def review(self, goal):
        code = await self.write_code.run(goal)
        return await self.write_code.run(code)
""",
}


def test_a_method_of_a_model_wrapper_that_asks_no_model_is_followed_into(tmp_path: Path) -> None:
    # MetaGPT's DataAnalyst: ExecuteNbCode is an Action (it has an llm, so its objects are model
    # wrappers), but its run(code) runs the code in a Jupyter kernel and asks no model: the answer
    # handed to it is followed in. A method that asks the model (WriteCode.run) is the next request.
    calls = scan_calls(tmp_path, ACTIONS)
    assert calls[("pkg/role.py", 11)][:2] == ("WriteCode.run", "required")
    assert calls[("pkg/role.py", 15)][:2] == ("WriteCode.run", "autonomous")  # the next request's prompt
    assert calls[("pkg/action.py", 9)][1] == "required"


DOCSTRING = """\
from openai import OpenAI

client = OpenAI()


class Agent:
    def shorten(self, result, max_tokens):
        \"\"\"
        Truncate the result string to max_tokens tokens.
        \"\"\"
        return result[: max_tokens * 4]

    def wipe(self, db):
        db.execute("TRUNCATE TABLE results")

    def answer(self, question):
        reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}]).choices[0].message.content
        return self.shorten(reply, 100)

    def answer_and_wipe(self, question, db):
        reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}]).choices[0].message.content
        if reply == "wipe":
            self.wipe(db)
"""


def test_a_docstring_is_no_sql(tmp_path: Path) -> None:
    # langroid's _maybe_truncate_result: its docstring begins "Truncate the result string", which read as
    # SQL TRUNCATE (an irreversible deletion) on every answer a tool result passed through; SQL a call
    # is given still counts.
    calls = scan_calls(tmp_path, {"agent.py": DOCSTRING})
    assert calls[("agent.py", 17)][1] == "autonomous"
    assert calls[("agent.py", 21)][1:] == ("required", ("R3", "R10"))


E2B = """\
import os

from openai import AsyncOpenAI

client = AsyncOpenAI()


async def execute_e2b(code):
    from e2b_code_interpreter import AsyncSandbox

    sandbox = await AsyncSandbox.create(api_key=os.getenv("E2B_API_KEY"))
    execution = await sandbox.run_code(code=code, timeout=60)
    return execution.logs


async def run(task):
    answer = await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    return await execute_e2b(answer.choices[0].message.content)
"""


def test_code_run_in_an_e2b_sandbox_is_code_run(tmp_path: Path) -> None:
    # khoj's code tool: the generated Python runs in an E2B sandbox (network on by default); the name
    # run_code alone counted only as reviewed.
    calls = scan_calls(tmp_path, {"runner.py": E2B})
    assert calls[("runner.py", 17)][1:] == ("required", ("R1",))


FILES_WRITTEN = """\
import ast

from openai import OpenAI

client = OpenAI()


def generate_response(system, user):
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content


def generate_file(filename, filepaths_string=None):
    filecode = generate_response("Write the file.", f"{filename} among {filepaths_string}")
    return filename, filecode


def write_file(filename, filecode):
    with open(filename, "w") as f:
        f.write(filecode)


def main(prompt):
    filepaths_string = generate_response("List the files to write.", prompt)
    for name in ast.literal_eval(filepaths_string):
        filename, filecode = generate_file(name, filepaths_string=filepaths_string)
        write_file(filename, filecode)
"""


def test_a_model_wrapper_handing_back_its_argument_hands_it_back_to_its_callers(tmp_path: Path) -> None:
    # smol-developer: generate_file(name) asks the model for the file's code and hands back the name
    # beside it; the walk stops at that call (the next request), so the name the first answer chose
    # goes on from generate_file's callers, to the file written.
    calls = scan_calls(tmp_path, {"dev.py": FILES_WRITTEN})
    assert calls[("dev.py", 24)][1] == "reviewed"
