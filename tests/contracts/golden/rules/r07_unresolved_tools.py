"""R7: tools that are only known at run time (MCP servers)."""
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.prebuilt import create_react_agent
from escalated.guard import guard


async def run(question: str):
    mcp = MultiServerMCPClient({"files": {"url": "http://localhost:8000/mcp", "transport": "streamable_http"}})
    tools = await mcp.get_tools()
    agent = create_react_agent("openai:gpt-4o", tools)
    return await guard("r07_unresolved_tools.run", lambda: agent.ainvoke({"messages": [{"role": "user", "content": question}]}))
