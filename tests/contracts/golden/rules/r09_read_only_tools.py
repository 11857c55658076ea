"""R9: read-only tools over private data."""
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import tool
from escalated.guard import guard

ORDERS: dict[str, str] = {}


@tool
def lookup_order(order_id: str) -> str:
    """Find an order's status."""
    return ORDERS.get(order_id, "unknown")


def support(question: str):
    llm = ChatAnthropic(model="claude-sonnet-4-5")
    return guard("r09_read_only_tools.support", lambda: llm.bind_tools([lookup_order]).invoke(question))
