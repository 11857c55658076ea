"""Point 5: running the triage agent reaches the refund tool through a hand-off."""
from agents import Agent, Runner, function_tool

from app.payments import refund_charge
from escalated.guard import guard
from escalated.guard import guard_tool


@function_tool
@guard_tool("handoffs.run_triage", awaitable=True)
def issue_refund(charge_id: str) -> str:
    return refund_charge(charge_id)


@function_tool
def order_status(order_id: str) -> str:
    return "shipped"


refunds = Agent(name="refunds", tools=[issue_refund])
triage = Agent(name="triage", tools=[order_status], handoffs=[refunds])


def run_triage(request: str) -> str:
    return guard("handoffs.run_triage", lambda: Runner.run_sync(triage, request)).final_output
