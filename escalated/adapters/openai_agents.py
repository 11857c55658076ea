"""The OpenAI Agents SDK's own approval hook, answered by a reviewer through escalated.

Tools declared with ``needs_approval`` pause the run: ``RunResult.interruptions``
lists the calls waiting. Each becomes one escalation (``subject.type =
"tool_call"``, the tool's name and JSON arguments as evidence, choices
``approve``/``reject``, ``Idempotency-Key: <run_id>:<call id>``); the
reviewer's choice is applied with ``RunState.approve`` / ``reject(
rejection_message=...)`` and the run continues.

- ``run_with_approvals``: one process, waiting for each decision over ``/wait``.
- ``start_run`` / ``resume_run``: the durable pair. The run's ``RunState``
  (the SDK's own JSON) is kept under ``run_id`` in ``store`` (a directory);
  any process (a callback receiver) resumes it once every decision is in.
  Resuming a finished run returns its result again and runs nothing.

Extra keyword arguments (``context=``, ``max_turns=``, ``run_config=``, …)
go to every ``Runner.run`` of the run, first and resumed.
"""

from __future__ import annotations

import os
from typing import Any

try:
    from agents import Agent, RunResult, Runner, RunState
    from agents.items import ToolApprovalItem
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "escalated.adapters.openai_agents needs the OpenAI Agents SDK: pip install 'escalated[openai-agents]'"
    ) from exc

import attrs

from escalated.adapters import driver
from escalated.adapters.approvals import Approval, ApprovalUnavailable, Paused, client_scope, resume_target
from escalated.adapters.driver import Pending, Step
from escalated.adapters.runstore import RunStore
from escalated.agent.client import EscalatedClient
from escalated.agent.toolcall import ToolCall

__all__ = ["ApprovalUnavailable", "Paused", "resume_run", "run_with_approvals", "start_run"]


async def run_with_approvals(
    agent: Agent[Any],
    input: Any,
    *,
    policy: str,
    run_id: str,
    client: EscalatedClient | None = None,
    context: Any = None,
    max_turns: int | None = None,
    **run_kwargs: Any,
) -> RunResult:
    """Run ``agent``; each call that needs approval waits for a reviewer, then the run goes on."""
    run = _AgentRun(agent, input, _kwargs(context=context, max_turns=max_turns, **run_kwargs))
    async with client_scope(client) as escalated:
        return await driver.run_waiting(run, client=escalated, policy=policy, run_id=run_id)


async def start_run(
    agent: Agent[Any],
    input: Any,
    *,
    policy: str,
    run_id: str,
    store: str | os.PathLike[str],
    client: EscalatedClient | None = None,
    context: Any = None,
    resume_url: str | None = None,
    resume_secret: str | None = None,
    **run_kwargs: Any,
) -> RunResult | Paused:
    """Run ``agent`` until it ends or pauses; a pause files its escalations and saves the ``RunState``.

    ``resume_url`` (and ``resume_secret``) make the server call a receiver
    back when a call is decided; its handler calls ``resume_run``. A start
    retried with a run id the store already holds resumes that run instead.
    """
    run = _AgentRun(agent, input, _kwargs(context=context, **run_kwargs))
    resume = resume_target(resume_url, resume_secret)
    async with client_scope(client) as escalated:
        return await driver.start_durable(
            run, runs=RunStore(store), client=escalated, policy=policy, run_id=run_id, resume=resume
        )


async def resume_run(
    agent: Agent[Any],
    *,
    run_id: str,
    store: str | os.PathLike[str],
    client: EscalatedClient | None = None,
    context: Any = None,
    **run_kwargs: Any,
) -> RunResult | Paused:
    """Continue the stored run once every call it waits on is decided; ``Paused`` while any is open."""
    run = _AgentRun(agent, None, _kwargs(context=context, **run_kwargs))
    async with client_scope(client) as escalated:
        return await driver.resume_durable(run, runs=RunStore(store), client=escalated, run_id=run_id)


@attrs.define
class _AgentRun:
    """One run of ``agent`` in the SDK's terms: interruptions in, approve/reject out."""

    agent: Agent[Any]
    input: Any
    kwargs: dict[str, Any]
    framework: str = "openai-agents"

    async def start(self) -> Step:
        return self._step(await Runner.run(self.agent, self.input, **self.kwargs))

    async def resume(self, state: Any, approvals: dict[str, Approval]) -> Step:
        if isinstance(state, str):  # from the store: the SDK's JSON
            state = await RunState.from_string(self.agent, state, **self._context_override())
        for item in state.get_interruptions():
            approval = approvals[item.call_id]
            if approval.approved:
                state.approve(item)
            else:
                state.reject(item, rejection_message=approval.message)
        return self._step(await Runner.run(self.agent, state, **self.kwargs))

    def dump(self, step: Step) -> str:
        return step.state.to_string()

    async def finished(self, record: dict[str, Any]) -> RunResult:
        """The stored result of a finished run, rebuilt from its state: nothing runs again.

        The SDK has no public way to make a ``RunResult`` from a ``RunState``;
        these are the fields its own runner fills from the same state.
        """
        state = await RunState.from_string(self.agent, record["state"], **self._context_override())
        last_agent = state._current_agent or self.agent
        assert state._context is not None  # from_string gives the state its context
        return RunResult(
            input=state._original_input,
            new_items=list(state._generated_items),
            raw_responses=list(state._model_responses),
            final_output=_output_value(last_agent, record.get("output")),
            input_guardrail_results=list(state._input_guardrail_results),
            output_guardrail_results=list(state._output_guardrail_results),
            tool_input_guardrail_results=list(state._tool_input_guardrail_results),
            tool_output_guardrail_results=list(state._tool_output_guardrail_results),
            context_wrapper=state._context,
            _last_agent=last_agent,
        )

    def _step(self, result: RunResult) -> Step:
        state = result.to_state()
        pending = tuple(_pending(item) for item in state.get_interruptions())
        return Step(state=state, pending=pending, result=result, output=_output_json(result.final_output))

    def _context_override(self) -> dict[str, Any]:
        context = self.kwargs.get("context")
        return {"context_override": context} if context is not None else {}


def _pending(item: ToolApprovalItem) -> Pending:
    name = item.qualified_name or item.name or "tool"
    tool = next((t for t in getattr(item.agent, "tools", ()) if getattr(t, "name", None) == item.name), None)
    call = ToolCall(
        name=name, call_id=item.call_id or name, arguments=item.arguments, description=getattr(tool, "description", None)
    )
    return Pending(call=call, agent_id=item.agent.name)


def _kwargs(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


def _output_json(output: Any) -> Any:
    if output is None or isinstance(output, (str, int, float, bool)):
        return output
    from pydantic import TypeAdapter

    return TypeAdapter(type(output)).dump_python(output, mode="json")


def _output_value(agent: Agent[Any], saved: Any) -> Any:
    output_type = getattr(agent, "output_type", None)
    if output_type in (None, str) or saved is None:
        return saved
    from pydantic import TypeAdapter

    return TypeAdapter(output_type).validate_python(saved)
