"""Agno's own confirmation hook, answered by a reviewer through escalated.

A tool declared ``@tool(requires_confirmation=True)`` (or named in a toolkit's
``requires_confirmation_tools=``) pauses the run before it runs: the
``RunOutput`` is ``is_paused`` and its ``active_requirements`` list the calls
waiting. Each becomes one escalation (``subject.type = "tool_call"``, the
tool's name and JSON arguments as evidence, choices ``approve``/``reject``,
``Idempotency-Key: <run_id>:<tool call id>``); the reviewer's choice is
applied with ``requirement.confirm()`` / ``reject(note=<who said no, and
why>)`` and the run goes on with ``continue_run``, so a rejected tool never
runs and the model reads why.

- ``run_with_approvals``: ``agent.run``, the server's address and key from
  ``ESCALATED_URL`` / ``ESCALATED_API_KEY``.
- ``arun_with_approvals``: ``agent.arun``, with a client of the caller's or one from the environment.

A pause that asks for something other than a confirmation (user input, an
external execution) raises ``ApprovalUnavailable``: escalated answers
approvals only. Extra keyword arguments (``user_id=``, ``session_id=``,
``dependencies=``, …) go to the run, and those ``continue_run`` takes go to
each continuation.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

try:
    from agno.agent import Agent
    from agno.run.agent import RunOutput
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("escalated.adapters.agno needs Agno: pip install 'escalated[agno]'") from exc

from escalated.adapters.approvals import ApprovalUnavailable, client_scope, file_call, in_own_loop, wait_approval
from escalated.agent.client import EscalatedClient
from escalated.agent.toolcall import ToolCall

__all__ = ["ApprovalUnavailable", "arun_with_approvals", "run_with_approvals"]


def run_with_approvals(agent: Agent, input: Any = None, *, policy: str, run_id: str, **run_kwargs: Any) -> RunOutput:
    """``agent.run(input, **run_kwargs)``; each call waiting for confirmation waits for a reviewer, then the run goes on."""
    output = agent.run(input, **run_kwargs)
    while output.is_paused:
        in_own_loop(functools.partial(_decide_from_env, agent, output, policy=policy, run_id=run_id))
        output = agent.continue_run(output, requirements=output.requirements, **_continued(agent.continue_run, run_kwargs))
    return output


async def arun_with_approvals(
    agent: Agent, input: Any = None, *, policy: str, run_id: str, client: EscalatedClient | None = None, **run_kwargs: Any
) -> RunOutput:
    """The same for ``agent.arun``."""
    async with client_scope(client) as escalated:
        output = await agent.arun(input, **run_kwargs)
        while output.is_paused:
            await _decide(escalated, agent, output, policy=policy, run_id=run_id)
            output = await agent.acontinue_run(output, requirements=output.requirements, **_continued(agent.acontinue_run, run_kwargs))
    return output


async def _decide(client: EscalatedClient, agent: Agent, output: RunOutput, *, policy: str, run_id: str) -> None:
    """File every call the pause waits on first, then apply each decision to its requirement."""
    waiting = list(output.active_requirements)
    others = sorted({r.tool_execution.tool_name or "?" for r in waiting if not r.needs_confirmation and r.tool_execution})
    if others:
        raise ApprovalUnavailable(
            f"the run paused {', '.join(others)} for user input or an external execution, not a confirmation: "
            "escalated answers approvals only"
        )
    agent_id = agent.name or agent.id or "agno-agent"
    filed = [(r, await file_call(client, _tool_call(agent, r.tool_execution), policy=policy, run_id=run_id, agent_id=agent_id)) for r in waiting]
    for requirement, escalation in filed:
        approval = await wait_approval(client, escalation)
        if approval.approved:
            requirement.confirm()
        else:
            requirement.reject(note=approval.message or "The call was rejected.")


async def _decide_from_env(agent: Agent, output: RunOutput, **kwargs: Any) -> None:
    async with client_scope(None) as client:
        await _decide(client, agent, output, **kwargs)


def _tool_call(agent: Agent, execution: Any) -> ToolCall:
    name = execution.tool_name or "tool"
    return ToolCall(name=name, call_id=execution.tool_call_id or name, arguments=execution.tool_args, description=_description(agent, name))


def _description(agent: Agent, name: str) -> str | None:
    """The tool's description as Agno holds it: a ``Function``, or one of a toolkit's."""
    for tool in agent.tools if isinstance(agent.tools, list) else ():
        functions = getattr(tool, "functions", None)
        function = functions.get(name) if isinstance(functions, dict) else tool if getattr(tool, "name", None) == name else None
        if function is not None:
            return getattr(function, "description", None) or inspect.getdoc(getattr(function, "entrypoint", None))
    return None


def _continued(method: Any, run_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run's keyword arguments that ``continue_run`` also takes (the session, the user, the dependencies)."""
    accepted = inspect.signature(method).parameters
    return {k: v for k, v in run_kwargs.items() if k in accepted and k not in {"requirements", "run_response"}}

