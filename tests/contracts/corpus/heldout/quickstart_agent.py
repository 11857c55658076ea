"""Shaped like anthropic-quickstarts' agents/agent.py: tools from the constructor, spread from a helper's dict."""
from anthropic import Anthropic


class Agent:
    def __init__(self, tools=None, client=None):
        self.tools = list(tools or [])
        self.client = client or Anthropic()

    def _params(self):
        return {"model": "claude", "max_tokens": 1024, "tools": [tool.to_dict() for tool in self.tools]}

    def loop(self, messages):
        params = self._params()
        response = self.client.messages.create(**params, messages=messages)
        calls = [block for block in response.content if block.type == "tool_use"]
        if calls:
            return [self.run_tool(call) for call in calls]
        return response

    def run_tool(self, call):
        return next(t for t in self.tools if t.name == call.name).run(call.input)
