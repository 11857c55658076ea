"""Point 11: the agent runs tools imported from another module."""
from agents import Agent, Runner

from app.support_tools import lookup_order, refund_order
from escalated.guard import guard
import uuid
from escalated.adapters.openai_agents import run_with_approvals

support = Agent(name="support", tools=[lookup_order, refund_order])


async def answer(question: str) -> str:
    result = await guard("support_agent.answer", lambda: run_with_approvals(support, question, policy="agents.support-agent.answer", run_id=f"support_agent.answer:{uuid.uuid4()}"))
    return result.final_output
