"""Human gates the code already has: LangGraph interrupt, OpenAI Agents needs_approval."""
from agents import Agent, Runner, function_tool
from langchain_openai import ChatOpenAI
from langgraph.types import interrupt

model = ChatOpenAI(model="gpt-4o")


def draft_node(state: dict) -> dict:
    draft = model.invoke(state["request"])
    decision = interrupt({"draft": draft.content})
    return {"draft": draft.content, "decision": decision}


@function_tool(needs_approval=True)
def cancel_subscription(customer_id: str) -> str:
    return f"cancelled {customer_id}"


support = Agent(name="support", tools=[cancel_subscription])


async def run_support(request: str) -> str:
    result = await Runner.run(support, request)
    return result.final_output
