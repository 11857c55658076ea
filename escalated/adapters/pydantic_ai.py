"""Pydantic AI's deferred tool approvals, answered by a reviewer through escalated.

Tools declared with ``requires_approval=True`` (or raising ``ApprovalRequired``)
end the run with a ``DeferredToolRequests`` output (the agent's
``output_type`` must include it). Each call in ``.approvals`` becomes one
escalation (``subject.type = "tool_call"``, the tool's name and JSON
arguments as evidence, choices ``approve``/``reject``,
``Idempotency-Key: <run_id>:<tool_call_id>``); the decisions go back as
``DeferredToolResults`` (``True``, or ``ToolDenied(<the reviewer's
reason>)``) with the run's message history, and the run continues.

- ``run_with_approvals``: one process, waiting for each decision over ``/wait``.
- ``start_run`` / ``resume_run``: the durable pair; the store keeps the
  message history (and, once finished, the ``AgentRunResult``) under
  ``run_id``. Resuming a finished run returns its result again and runs nothing.

Extra keyword arguments (``deps=``, ``model_settings=``, ``usage_limits=``, …)
go to every ``agent.run`` of the run, first and resumed.
"""

from __future__ import annotations

import os
from typing import Any

try:
    from pydantic import TypeAdapter
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelMessagesTypeAdapter, ToolDenied
    from pydantic_ai.run import AgentRunResult
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("escalated.adapters.pydantic_ai needs Pydantic AI: pip install 'escalated[pydantic-ai]'") from exc

import attrs

from escalated.adapters import driver
from escalated.adapters.approvals import Approval, ApprovalUnavailable, Paused, client_scope, resume_target
from escalated.adapters.driver import Pending, Step
from escalated.adapters.runstore import RunStore
from escalated.agent.client import EscalatedClient
from escalated.agent.toolcall import ToolCall

__all__ = ["ApprovalUnavailable", "Paused", "resume_run", "run_with_approvals", "start_run"]

_RESULT = TypeAdapter(AgentRunResult[Any])


async def run_with_approvals(
    agent: Agent[Any, Any],
    prompt: Any = None,
    *,
    policy: str,
    run_id: str,
    client: EscalatedClient | None = None,
    **run_kwargs: Any,
) -> AgentRunResult[Any]:
    """Run ``agent``; each call that needs approval waits for a reviewer, then the run goes on."""
    async with client_scope(client) as escalated:
        return await driver.run_waiting(_AgentRun(agent, prompt, run_kwargs), client=escalated, policy=policy, run_id=run_id)


async def start_run(
    agent: Agent[Any, Any],
    prompt: Any = None,
    *,
    policy: str,
    run_id: str,
    store: str | os.PathLike[str],
    client: EscalatedClient | None = None,
    resume_url: str | None = None,
    resume_secret: str | None = None,
    **run_kwargs: Any,
) -> AgentRunResult[Any] | Paused:
    """Run ``agent`` until it ends or defers calls for approval; a pause files them and saves the history.

    ``resume_url`` (and ``resume_secret``) make the server call a receiver
    back when a call is decided; its handler calls ``resume_run``. A start
    retried with a run id the store already holds resumes that run instead.
    """
    resume = resume_target(resume_url, resume_secret)
    async with client_scope(client) as escalated:
        return await driver.start_durable(
            _AgentRun(agent, prompt, run_kwargs), runs=RunStore(store), client=escalated, policy=policy, run_id=run_id, resume=resume
        )


async def resume_run(
    agent: Agent[Any, Any],
    *,
    run_id: str,
    store: str | os.PathLike[str],
    client: EscalatedClient | None = None,
    **run_kwargs: Any,
) -> AgentRunResult[Any] | Paused:
    """Continue the stored run once every call it waits on is decided; ``Paused`` while any is open."""
    async with client_scope(client) as escalated:
        return await driver.resume_durable(_AgentRun(agent, None, run_kwargs), runs=RunStore(store), client=escalated, run_id=run_id)


@attrs.define
class _AgentRun:
    """One run of ``agent`` in Pydantic AI's terms: deferred approvals in, deferred results out."""

    agent: Agent[Any, Any]
    prompt: Any
    kwargs: dict[str, Any]
    framework: str = "pydantic-ai"

    async def start(self) -> Step:
        return self._step(await self.agent.run(self.prompt, **self.kwargs))

    async def resume(self, state: Any, approvals: dict[str, Approval]) -> Step:
        history = ModelMessagesTypeAdapter.validate_json(state) if isinstance(state, str) else state
        results = DeferredToolResults(
            approvals={call_id: True if a.approved else ToolDenied(a.message or "The call was rejected.") for call_id, a in approvals.items()}
        )
        kwargs = {k: v for k, v in self.kwargs.items() if k != "message_history"}
        return self._step(await self.agent.run(message_history=history, deferred_tool_results=results, **kwargs))

    def dump(self, step: Step) -> str:
        if step.pending:
            return ModelMessagesTypeAdapter.dump_json(step.state).decode()
        return _RESULT.dump_json(step.result).decode()

    async def finished(self, record: dict[str, Any]) -> AgentRunResult[Any]:
        """The stored result of a finished run (Pydantic AI's own serialised form): nothing runs again."""
        return _RESULT.validate_json(record["state"])

    def _step(self, result: AgentRunResult[Any]) -> Step:
        output = result.output
        if not isinstance(output, DeferredToolRequests):
            return Step(state=result.all_messages(), result=result)
        if output.calls:
            names = ", ".join(sorted({c.tool_name for c in output.calls}))
            raise ApprovalUnavailable(
                f"the run deferred {names} for an external result, not an approval: escalated answers approvals only"
            )
        agent_id = self.agent.name or "pydantic-ai-agent"
        pending = tuple(Pending(call=self._tool_call(part), agent_id=agent_id) for part in output.approvals)
        return Step(state=result.all_messages(), pending=pending, result=result)

    def _tool_call(self, part: Any) -> ToolCall:
        return ToolCall(name=part.tool_name, call_id=part.tool_call_id, arguments=part.args, description=self._description(part.tool_name))

    def _description(self, name: str) -> str | None:
        for toolset in self.agent.toolsets:
            tool = (getattr(toolset, "tools", None) or {}).get(name)
            if tool is not None:
                return getattr(tool, "description", None)
        return None
