"""Point 5: the tool list comes from a helper in another module."""
from langchain_openai import ChatOpenAI

from app.toolbox import make_tools
from escalated.guard import guard

llm = ChatOpenAI(model="gpt-4o").bind_tools(make_tools())


def act(request: str) -> object:
    return guard("uses_toolbox.act", lambda: llm.invoke(request))
