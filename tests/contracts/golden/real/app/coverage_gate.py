"""Point 1: one tool's needs_approval does not cover an agent whose tools have none."""
import stripe
from agents import Agent, Runner, function_tool
from escalated.guard import guard
import uuid
from escalated.adapters.openai_agents import run_with_approvals


@function_tool(needs_approval=True)
def issue_refund(charge_id: str) -> str:
    stripe.Refund.create(charge=charge_id)
    return "refunded"


@function_tool(needs_approval=True)
def close_account(user_id: str) -> str:
    stripe.Customer.delete(user_id)
    return "closed"


refunds = Agent(name="refunds", tools=[issue_refund])
accounts = Agent(name="accounts", tools=[close_account])


async def run_refunds(request: str) -> str:
    result = await guard("coverage_gate.run_refunds", lambda: run_with_approvals(refunds, request, policy="agents.coverage-gate.run-refunds", run_id=f"coverage_gate.run_refunds:{uuid.uuid4()}"))
    return result.final_output


async def run_accounts(request: str) -> str:
    result = await Runner.run(accounts, request)
    return result.final_output
