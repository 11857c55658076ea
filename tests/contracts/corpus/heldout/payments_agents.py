"""Shaped like stripe/agent-toolkit's Agents SDK examples: tools from a payment toolkit."""
from agents import Agent, Runner, WebSearchTool
from stripe_agent_toolkit.openai.toolkit import StripeAgentToolkit

reader = StripeAgentToolkit(secret_key="sk", configuration={"actions": {"invoices": {"read": True}}})
writer = StripeAgentToolkit(secret_key="sk", configuration={"actions": {"invoices": {"create": True, "update": True}}})

invoice_agent = Agent(name="Invoice Agent", tools=writer.get_tools())
lookup_agent = Agent(name="Lookup Agent", tools=[*reader.get_tools()], handoffs=[invoice_agent])
research_agent = Agent(name="Research Agent", tools=[WebSearchTool()])
reading_agent = Agent(name="Reading Agent", tools=reader.get_tools())


async def bill(assignment: str):
    return (await Runner.run(lookup_agent, assignment)).final_output


async def research(question: str):
    print((await Runner.run(research_agent, question)).final_output)


async def look_up(question: str):
    print((await Runner.run(reading_agent, question)).final_output)
