"""The scripted Agno model of test_agno.py (a ``Model`` subclass, Agno's own extension point for a
model provider). A module of its own so that Agno is imported by the worker that runs those tests,
not by every worker at collection."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agno.models.base import Model
from agno.models.response import ModelResponse


def tool_call(call_id: str, name: str, **arguments: object) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


CALLS = [tool_call("call-1", "issue_refund", order_id="o-1", amount_eur=10.0), tool_call("call-2", "issue_refund", order_id="o-2", amount_eur=20.0)]


@dataclass
class Scripted(Model):
    """Its ``calls`` in one turn (two refunds unless told), then an answer listing what each returned."""

    id: str = "scripted"
    name: str = "Scripted"
    provider: str = "scripted"
    calls: tuple = tuple(CALLS)

    def invoke(self, messages, assistant_message=None, **kwargs):
        answers = [str(m.content) for m in messages if m.role == "tool"]
        if answers:
            return ModelResponse(role="assistant", content=" | ".join(answers))
        return ModelResponse(role="assistant", tool_calls=list(self.calls))

    async def ainvoke(self, *args, **kwargs):
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args, **kwargs):
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args, **kwargs):
        yield self.invoke(*args, **kwargs)

    def _parse_provider_response(self, response, **kwargs):
        return response

    def _parse_provider_response_delta(self, response):
        return response
