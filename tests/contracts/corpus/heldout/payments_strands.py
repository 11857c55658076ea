"""Shaped like stripe/agent-toolkit's Strands example: calling the agent runs it."""
from strands import Agent
from stripe_agent_toolkit.strands.toolkit import StripeAgentToolkit

toolkit = StripeAgentToolkit(secret_key="sk", configuration={"actions": {"prices": {"create": True}}})
agent = Agent(tools=toolkit.get_tools())
response = agent("Create a price of $100 for the product 'test'")
print(response)
