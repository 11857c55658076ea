"""Generic agents, and gates the frameworks already have."""
import subprocess
from dataclasses import dataclass

import stripe
from agents import Agent, RunContextWrapper, Runner, ShellTool, function_tool
from pydantic_ai import Agent as PydanticAgent
from escalated.guard import guard
import uuid
from escalated.adapters.openai_agents import run_with_approvals


@dataclass
class Ctx:
    customer: str


@function_tool(needs_approval=True)
def cancel_flight(ctx: RunContextWrapper[Ctx], booking: str) -> str:
    stripe.Refund.create(charge=booking)
    return "cancelled"


airline = Agent[Ctx](name="airline", tools=[cancel_flight])
ops = Agent(name="ops", tools=[ShellTool(executor=None, needs_approval=True)])
coder = PydanticAgent("openai:gpt-4o")


@coder.tool(requires_approval=True)
def run_tests(ctx, command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


async def handle(message: str, ctx: Ctx):
    return (await guard("typed_and_gated.handle", lambda: run_with_approvals(airline, message, context=ctx, policy="agents.typed-and-gated.handle", run_id=f"typed_and_gated.handle:{uuid.uuid4()}"))).final_output


async def operate(message: str):
    return await Runner.run(ops, message)


def code(prompt: str):
    return coder.run_sync(prompt)
