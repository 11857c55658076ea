"""Microsoft Agent Framework's own approval hook, answered by a reviewer through escalated.

A tool declared ``@tool(approval_mode="always_require")`` is not run when the
model calls it: ``agent.run`` returns with the call in ``user_input_requests``
(a ``function_approval_request``). Each becomes one escalation
(``subject.type = "tool_call"``, the tool's name and JSON arguments as
evidence, choices ``approve``/``reject``, ``Idempotency-Key: <run_id>:<tool
call id>``); the reviewer's choice goes back as the framework's own
``to_function_approval_response(approved=...)`` in the same session, and the
run goes on. A rejected call never runs, and the model reads who rejected it
and why: the framework words every rejection the same ("Tool call invocation
was rejected by user."), so a chat middleware of the continued run puts the
reviewer's message in its place (a client without the framework's chat
middleware layer, which every client the framework ships has, keeps the
framework's words).

- ``run_with_approvals(agent, messages, policy=, run_id=)``: ``agent.run``,
  with the caller's ``client=`` or one from ``ESCALATED_URL`` /
  ``ESCALATED_API_KEY``. The run keeps the caller's ``session=``, or gets a
  session of its own so the answers find the calls they answer.

A pause that asks for anything else than a tool approval (a hosted tool's,
an MCP server's) raises ``ApprovalUnavailable`` before anything runs:
escalated answers tool calls only. The run waits in this process; it is not
durable across a restart (the escalation is: a retry with the same run id
finds the same escalation and its decision).
"""

from __future__ import annotations

from typing import Any

try:
    from agent_framework import Agent, AgentResponse, ChatContext, ChatMiddleware, Message
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("escalated.adapters.agent_framework needs the Agent Framework: pip install 'escalated[agent-framework]'") from exc

from escalated.adapters.approvals import ApprovalUnavailable, client_scope, file_call, wait_approval
from escalated.agent.client import EscalatedClient
from escalated.agent.toolcall import ToolCall

__all__ = ["ApprovalUnavailable", "run_with_approvals"]

APPROVAL_REQUEST = "function_approval_request"
# What the framework puts in a rejected call's result; only this text is replaced, so a later call that
# reuses the call id and runs keeps its real result.
FRAMEWORKS_REJECTION = "Error: Tool call invocation was rejected by user."


async def run_with_approvals(
    agent: Agent, messages: Any = None, *, policy: str, run_id: str, client: EscalatedClient | None = None, **run_kwargs: Any
) -> AgentResponse:
    """``agent.run(messages, **run_kwargs)``; each call waiting for approval waits for a reviewer, then the run goes on."""
    if run_kwargs.get("stream"):
        raise ApprovalUnavailable("a streamed run cannot wait for a reviewer here: run it without stream=True")
    session = run_kwargs.pop("session", None) or agent.create_session()
    async with client_scope(client) as escalated:
        middleware = list(run_kwargs.pop("middleware", None) or ())
        words = _ReviewersWords()
        response = await agent.run(messages, session=session, middleware=middleware, **run_kwargs)
        while response.user_input_requests:
            answers = await _decide(escalated, agent, response.user_input_requests, words, policy=policy, run_id=run_id)
            response = await agent.run(Message("user", answers), session=session, middleware=[*middleware, words], **run_kwargs)
    return response


async def _decide(
    client: EscalatedClient, agent: Agent, requests: list[Any], words: _ReviewersWords, *, policy: str, run_id: str
) -> list[Any]:
    """File every call the run waits on first (the reviewers see them together), then answer each with its decision."""
    others = sorted({_name(r) for r in requests if r.type != APPROVAL_REQUEST or getattr(r, "function_call", None) is None})
    if others:
        raise ApprovalUnavailable(f"the run asks for {', '.join(others)}, not a tool approval: escalated answers tool approvals only")
    agent_id = agent.name or agent.id or "agent-framework-agent"
    filed = [(r, await file_call(client, _tool_call(agent, r.function_call), policy=policy, run_id=run_id, agent_id=agent_id)) for r in requests]
    answers = []
    for request, escalation in filed:
        approval = await wait_approval(client, escalation)
        if not approval.approved:
            words.instead[request.function_call.call_id] = approval.message or "The call was rejected."
        answers.append(request.to_function_approval_response(approved=approval.approved))
    return answers


class _ReviewersWords(ChatMiddleware):
    """Puts the reviewer's message where the framework wrote its own rejection, before the model reads it
    (in place: the session's history keeps the reviewer's words too)."""

    def __init__(self) -> None:
        self.instead: dict[str, str] = {}  # call id -> what the model reads

    async def process(self, context: ChatContext, call_next: Any) -> None:
        for message in context.messages:
            for content in message.contents:
                if content.type == "function_result" and content.result == FRAMEWORKS_REJECTION and content.call_id in self.instead:
                    content.result = self.instead[content.call_id]
        await call_next()


def _tool_call(agent: Agent, call: Any) -> ToolCall:
    name = call.name or "tool"
    return ToolCall(name=name, call_id=call.call_id or name, arguments=call.arguments, description=_description(agent, name))


def _description(agent: Agent, name: str) -> str | None:
    for tool in (getattr(agent, "default_options", None) or {}).get("tools") or ():
        if getattr(tool, "name", None) == name:
            return getattr(tool, "description", None) or None
    return None


def _name(request: Any) -> str:
    call = getattr(request, "function_call", None)
    return getattr(call, "name", None) or request.type or "?"
