"""Point 11: the agent runs tools imported from another module."""
from agents import Agent, Runner

from app.support_tools import lookup_order, refund_order

support = Agent(name="support", tools=[lookup_order, refund_order])


async def answer(question: str) -> str:
    result = await Runner.run(support, question)
    return result.final_output
