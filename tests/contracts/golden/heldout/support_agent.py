"""Shaped like stripe/agent-toolkit's customer_support example: a run wrapped by a module function."""
import requests
from agents import Agent, Runner, function_tool
from stripe_agent_toolkit.openai.toolkit import StripeAgentToolkit
from escalated.guard import guard
import uuid
from escalated.adapters.openai_agents import run_with_approvals

kit = StripeAgentToolkit(secret_key="sk", configuration={"actions": {"billing_portal_sessions": {"create": True}}})


@function_tool
def search_faq(question: str) -> str:
    return requests.get("https://example.com/faq", timeout=5).text


support = Agent(name="Support", tools=[search_faq, *kit.get_tools()])


async def run(items):
    return await guard("support_agent.run", lambda: run_with_approvals(support, items, policy="agents.support-agent.run", run_id=f"support_agent.run:{uuid.uuid4()}"))
