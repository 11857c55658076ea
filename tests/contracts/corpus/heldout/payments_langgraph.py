"""Shaped like stripe/agent-toolkit's LangGraph example: a tool list filled by extend()."""
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from stripe_agent_toolkit.langchain.toolkit import StripeAgentToolkit

llm = ChatOpenAI(model="gpt-4o")
toolkit = StripeAgentToolkit(secret_key="sk", configuration={"actions": {"payment_links": {"create": True}}})
tools = []
tools.extend(toolkit.get_tools())
executor = create_react_agent(llm, tools)
state = executor.invoke({"messages": "Create a payment link for a new product"})
print(state["messages"][-1].content)
