"""A tool whose body is a mock (it only changes the run's in-memory state) is what it tells the model it does.

The shape of a customer-service demo built on the OpenAI Agents SDK: ``@function_tool`` with
``name_override``/``description_override``, bodies that write the run's context object, read a
module's demo tables through helpers in another module and stream progress events to the chat.
Nothing in such a body moves money, but the model is told the tool books and charges: the real
body will. The declared irreversible action decides (basis ``declared``, counted like code);
a declared read stays a read, and a body that does reach outside is judged by what it does.
"""

from __future__ import annotations

from pathlib import Path

from escalated.contracts.scan.discovery import scan_tree
from tests.contracts.projects import scan_files

DATA = """\
ROOMS = {"101": {"status": "clean", "rate": 180}, "102": {"status": "occupied", "rate": 240}}


def load_defaults(state):
    state.hotel = state.hotel or "Harbour View"
    state.nights = state.nights or 2


def room_record(number):
    return ROOMS.get(number)
"""

CONTEXT = """\
from pydantic import BaseModel


class StayState(BaseModel):
    hotel: str | None = None
    nights: int | None = None
    room: str | None = None
    folio: str | None = None


class StayContext:
    def __init__(self, state: StayState, events):
        self.state = state
        self.events = events

    async def stream(self, event):
        await self.events.put(event)
"""

TOOLS = """\
import random
import string
from copy import deepcopy

from agents import RunContextWrapper, function_tool

from .context import StayContext
from .data import load_defaults, room_record


class Progress:
    def __init__(self, text):
        self.text = text


@function_tool(name_override="room_status", description_override="Look up the status of a room.")
async def room_status(context: RunContextWrapper[StayContext], number: str) -> str:
    \"\"\"Look up a room in the demo table.\"\"\"
    await context.context.stream(Progress(text=f"Checking room {number}..."))
    load_defaults(context.context.state)
    record = room_record(number) or {}
    return f"Room {number}: {record.get('status', 'unknown')}"


@function_tool(
    name_override="reserve_room",
    description_override="Reserve a room and charge the card on file for the first night.",
)
async def reserve_room(context: RunContextWrapper[StayContext], number: str) -> str:
    \"\"\"Reserve a room using the demo table and update the context.\"\"\"
    await context.context.stream(Progress(text="Reserving..."))
    state = context.context.state
    load_defaults(state)
    record = deepcopy(room_record(number) or {})
    state.room = number
    state.folio = state.folio or "".join(random.choices(string.ascii_uppercase, k=6))
    if any(word.startswith("sea") for word in record.get("tags", [])):
        state.room = number + "S"
    return f"Reserved room {state.room} at {record.get('rate', 0)} a night, folio {state.folio}"
"""

AGENTS = """\
from agents import Agent

from .tools import reserve_room, room_status

front_desk = Agent(name="Front desk", instructions="Help the guest.", tools=[room_status, reserve_room])
concierge = Agent(name="Concierge", instructions="Answer questions about rooms.", tools=[room_status])
"""

SERVER = """\
from agents import Runner

from hotel.agents import concierge, front_desk


async def respond(message: str, state):
    result = Runner.run_streamed(front_desk, message, context=state)
    async for event in result.stream_events():
        yield event


async def ask(message: str, state):
    result = await Runner.run(concierge, message, context=state)
    return result.final_output
"""

PROJECT = {
    "hotel/__init__.py": "",
    "hotel/data.py": DATA,
    "hotel/context.py": CONTEXT,
    "hotel/tools.py": TOOLS,
    "hotel/agents.py": AGENTS,
    "server.py": SERVER,
}


def test_a_mock_tool_declared_to_charge_makes_the_run_required(tmp_path: Path) -> None:
    result = scan_files(tmp_path, PROJECT)
    run = next(c for c in result.calls if (c.location.path, c.location.line) == ("server.py", 7))
    assert run.recommendation.mode == "required"
    declared = [f for f in run.findings if f.basis == "declared"]
    assert [f.rule for f in declared] == ["R2"]
    assert "reserve_room, described as 'Reserve a room and charge the card on file for the first night.'" in declared[0].detail
    assert "its body only changes the run's in-memory state" in declared[0].detail


def test_a_mock_tool_declared_to_read_stays_a_read(tmp_path: Path) -> None:
    result = scan_files(tmp_path, PROJECT)
    ask = next(c for c in result.calls if (c.location.path, c.location.line) == ("server.py", 13))
    assert ask.recommendation.mode != "required"
    assert not [f for f in ask.findings if f.basis == "declared"]


def test_a_body_reaching_outside_is_judged_by_what_it_does_not_by_its_declaration(tmp_path: Path) -> None:
    # The same declaration over a body that asks a web service: not a mock, so the name alone
    # (reserve: money, capped at reviewed) is all that is known of the charge.
    outside = TOOLS.replace(
        "    record = deepcopy(room_record(number) or {})\n",
        "    record = httpx.get(f\"https://rooms.example.com/{number}\").json()\n",
    ).replace("import random\n", "import random\n\nimport httpx\n")
    result = scan_files(tmp_path, {**PROJECT, "hotel/tools.py": outside})
    run = next(c for c in result.calls if (c.location.path, c.location.line) == ("server.py", 7))
    assert not [f for f in run.findings if f.basis == "declared"]
    assert run.recommendation.mode == "reviewed"


def test_the_docstring_is_the_declaration_when_the_decorator_gives_none(tmp_path: Path) -> None:
    declared = (
        '@function_tool(\n    name_override="reserve_room",\n'
        '    description_override="Reserve a room and charge the card on file for the first night.",\n)\n'
    )
    plain = TOOLS.replace(declared, "@function_tool\n").replace(
        '    \"\"\"Reserve a room using the demo table and update the context.\"\"\"\n',
        '    \"\"\"Reserve a room and charge the card on file for the first night.\"\"\"\n',
    )
    assert plain != TOOLS
    for name, text in {**PROJECT, "hotel/tools.py": plain}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    run = next(c for c in scan_tree(tmp_path).calls if (c.location.path, c.location.line) == ("server.py", 7))
    assert run.recommendation.mode == "required"


SCHEMAS = """\
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field


class SendInvoice(BaseModel):
    \"\"\"Send the invoice to the customer by email.\"\"\"

    to: str = Field(description="The customer's address")
    amount: int


class LookUpOrder(BaseModel):
    \"\"\"Look up an order by its number.\"\"\"

    number: str


llm = ChatOpenAI(model="gpt-4o")


def bill(messages):
    response = llm.bind_tools([SendInvoice, LookUpOrder], tool_choice="any").invoke(messages)
    return response.tool_calls[0]


def find(messages):
    response = llm.bind_tools([LookUpOrder], tool_choice="any").invoke(messages)
    return response.tool_calls[0]
"""


def test_a_schema_offered_as_a_tool_is_what_its_docstring_declares(tmp_path: Path) -> None:
    # The model fills in SendInvoice; the code that sends it is elsewhere (a graph's next node). What the
    # model is told calling it does is the docstring: an email sent, required. A schema declared to look
    # something up stays a read.
    result = scan_files(tmp_path, {"billing.py": SCHEMAS})
    modes = {c.location.line: c.recommendation.mode for c in result.calls}
    assert modes[22] == "required"
    assert modes[27] != "required"
    bill = next(c for c in result.calls if c.location.line == 22)
    assert {f.rule for f in bill.findings if f.basis == "declared"} == {"R2", "R5"}  # an invoice, by email
