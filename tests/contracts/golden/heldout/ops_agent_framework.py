"""The Microsoft Agent Framework as its samples write it: @tool functions with approval_mode
(the framework's own approval), a local shell behind the client's shell tool, an orchestration
workflow running its participants' tools, a run resumed with the approvals, a chat client asked directly."""

import stripe
from agent_framework import Agent, Message, tool
from agent_framework.openai import OpenAIChatClient
from agent_framework.orchestrations import SequentialBuilder
from agent_framework.tools import LocalShellTool
from escalated.guard import guard
import uuid
from escalated.adapters.agent_framework import run_with_approvals


@tool(approval_mode="always_require")
def refund(charge_id: str) -> str:
    """Refund a charge."""
    return stripe.Refund.create(charge=charge_id).id


@tool(approval_mode="never_require")
def order_status(order_id: str) -> str:
    """Look up an order."""
    return "shipped"


client = OpenAIChatClient()
shell = LocalShellTool(approval_mode="never_require", acknowledge_unsafe=True)
billing = Agent(client=client, name="billing", tools=[refund, order_status])
operator = Agent(client=client, name="operator", tools=[client.get_shell_tool(func=shell.as_function())])
writer = Agent(client=client, name="writer", instructions="Summarise for the customer.")
workflow = SequentialBuilder(participants=[billing, writer]).build()


async def refund_with_approval(question: str) -> str:
    session = billing.create_session()
    result = await billing.run(question, session=session)
    while len(result.user_input_requests) > 0:
        answers = [request.to_function_approval_response(approved=True) for request in result.user_input_requests]
        result = await billing.run(Message("user", answers), session=session)
    return result.text


async def operate(task: str) -> str:
    return (await guard("ops_agent_framework.operate", lambda: run_with_approvals(operator, task, policy="agents.ops-agent-framework.operate", run_id=f"ops_agent_framework.operate:{uuid.uuid4()}"))).text


async def handle_case(case: str, responses: dict) -> None:
    async for event in workflow.run(case, stream=True):
        print(event)
    async for event in workflow.run(stream=True, responses=responses):
        print(event)


async def subject_line(text: str) -> str:
    response = await guard("ops_agent_framework.subject_line", lambda: client.get_response(f"A subject line for: {text}"))
    return response.text
