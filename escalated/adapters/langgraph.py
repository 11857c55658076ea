"""LangGraph's ``interrupt`` / ``Command(resume=...)``, with the decision coming from escalated.

The pattern of examples/langgraph_refund as a library:

- In a node, ``await escalate(config, ...)`` (any question) or ``await
  approve_tool_call(config, call, ...)`` (one tool call, described as every
  adapter describes one) files the escalation with ``runId`` = the thread id
  and ``Idempotency-Key`` = ``<thread id>:<key>``, then calls ``interrupt``.
  LangGraph re-runs the node from its first line on resume; the same key
  replays the first escalation, so each pause files one.
- On the receiver side, ``ThreadResumer`` (a handler for
  ``escalated.agent.receiver.make_receiver_app``) turns a verified callback
  into ``Command(resume={<interrupt id>: <decision>})`` for the escalation's
  thread. It resumes the interrupt that waits on that very escalation, so
  parallel interrupts of one thread (and two callbacks at once) never cross,
  and a repeated callback finds nothing waiting and runs nothing.
  ``resume_by_waiting`` is the ``/wait`` fallback for cancellations without a
  callback and agents without a receiver.

The resume value is a ``dict``: ``escalationId``, ``status`` (``resolved``
or ``cancelled``), and ``choice``, ``reason``, ``response``, ``answeredBy``,
``resolvedBy`` for a decision, or ``reason``, ``cancelledBy`` for a
cancellation. The receiver reads it from the server (``GET``) after the
signature checked out, because a callback body carries no reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

try:
    from langgraph.types import Command, interrupt
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("escalated.adapters.langgraph needs LangGraph: pip install 'escalated[langgraph]'") from exc

import attrs

from escalated.adapters.approvals import (
    Approval,
    ApprovalUnavailable,
    cause_of,
    client_scope,
    rejection_message,
    resume_target,
)
from escalated.agent.client import ApiError, EscalatedClient
from escalated.agent.outcome import Outcome
from escalated.agent.toolcall import APPROVE, ToolCall, describe, idempotency_key
from escalated.domain.models import CANCELLED, RESOLVED

__all__ = ["ApprovalUnavailable", "ThreadResumer", "approve_tool_call", "escalate", "resume_by_waiting", "resume_value"]

MARK = "escalated"  # in every interrupt value this module raises, beside escalationId


async def escalate(
    config: Any,
    *,
    policy: str,
    key: str,
    subject: dict[str, str],
    question: str,
    evidence: list[str],
    choices: list[dict[str, str]],
    client: EscalatedClient | None = None,
    agent_id: str = "langgraph",
    resume_url: str | None = None,
    resume_secret: str | None = None,
) -> dict[str, Any]:
    """File one escalation for this thread and ``interrupt`` until it is decided; returns the decision.

    ``key`` names the pause within the thread: the same on the node's re-run,
    different for each pause (a node asking twice passes two keys).
    """
    thread_id = str(config["configurable"]["thread_id"])
    resume = resume_target(resume_url, resume_secret)
    async with client_scope(client) as escalated:
        try:
            filed = await escalated.create_escalation(
                policy=policy, agent_id=agent_id, run_id=thread_id, subject=subject, question=question,
                evidence=evidence, choices=choices, resume=resume, idempotency_key=idempotency_key(thread_id, key),
            )
        except ApiError as error:
            raise ApprovalUnavailable(
                f"could not ask a reviewer about {subject.get('label')} (thread {thread_id}): {cause_of(escalated, error)}"
            ) from error
    return interrupt({"escalationId": filed["id"], MARK: True})


async def approve_tool_call(config: Any, call: ToolCall | dict[str, Any], *, policy: str, **kwargs: Any) -> Approval:
    """Ask a reviewer about one tool call; ``Approval.approved`` says whether to run it.

    ``call`` is a ``ToolCall`` or a LangChain tool call (``{"name", "args",
    "id"}`` from ``AIMessage.tool_calls``); its id keys the pause. When not
    approved, ``Approval.message`` is what to return to the model instead of
    the tool's result (a ``ToolMessage``).
    """
    if isinstance(call, dict):
        call = ToolCall(name=call["name"], call_id=call["id"], arguments=call.get("args"))
    described = describe(call)
    decision = await escalate(
        config, policy=policy, key=call.call_id, subject=described.subject, question=described.question,
        evidence=described.evidence, choices=described.choices, **kwargs,
    )
    return approval_from(decision)


def approval_from(decision: dict[str, Any]) -> Approval:
    """A resume value (``resume_value``) as an ``Approval``."""
    if decision.get("status") == RESOLVED and decision.get("choice") == APPROVE:
        return Approval(decision["escalationId"], True)
    if decision.get("status") == CANCELLED:
        because = f": {decision['reason']}" if decision.get("reason") else ""
        return Approval(decision["escalationId"], False, f"The approval was cancelled by {decision.get('cancelledBy', '?')}{because}.")
    return Approval(decision["escalationId"], False, rejection_message(decision))


def resume_value(escalation: dict[str, Any]) -> dict[str, Any]:
    """What a node's ``interrupt`` returns for a resolved or cancelled escalation."""
    value: dict[str, Any] = {"escalationId": escalation["id"], "status": escalation["status"]}
    if escalation["status"] == CANCELLED:
        cancellation = escalation.get("cancellation") or {}
        return {**value, "reason": cancellation.get("reason"), "cancelledBy": cancellation.get("cancelledBy")}
    resolution = escalation.get("resolution") or {}
    fields = ("choice", "reason", "response", "answeredBy", "resolvedBy")
    return {**value, **{name: resolution.get(name) for name in fields}}


@attrs.define
class ThreadResumer:
    """Resume the thread an escalation belongs to, at the interrupt that waits on it, once.

    ``ThreadResumer(graph, client)`` is a receiver handler (a ``Callback`` or a
    ``Cancelled``); ``resume(escalation)`` does the same from an escalation
    already read. Returns the graph's output, or None when nothing of that
    thread waits on the escalation (a repeat, or the other path was first).
    """

    graph: Any
    client: EscalatedClient
    on_finished: Callable[[str, Any], Any] | None = None
    _locks: dict[str, asyncio.Lock] = attrs.field(factory=dict)

    async def __call__(self, outcome: Outcome) -> Any:
        # The body is verified; the decision's reason is only in the resource.
        return await self.resume(await self.client.get_escalation(outcome.escalation_id))

    async def resume(self, escalation: dict[str, Any]) -> Any:
        thread_id = escalation["runId"]
        config = {"configurable": {"thread_id": thread_id}}
        async with self._locks.setdefault(thread_id, asyncio.Lock()):  # one resume of a thread at a time
            waiting = _interrupt_for(await self.graph.aget_state(config), escalation["id"])
            if waiting is None:
                return None
            output = await self.graph.ainvoke(Command(resume={waiting: resume_value(escalation)}), config)
        if self.on_finished is not None:
            self.on_finished(thread_id, output)
        return output


async def resume_by_waiting(resumer: ThreadResumer, escalation_id: str) -> Any:
    """The ``/wait`` fallback: resume the thread once the escalation ends, whether a callback comes or not."""
    escalation = await resumer.client.wait_until_done(escalation_id)
    return await resumer.resume(escalation)


def _interrupt_for(snapshot: Any, escalation_id: str) -> str | None:
    """The id of the pending interrupt that waits on ``escalation_id``, if any."""
    pending = getattr(snapshot, "interrupts", None)
    if pending is None:  # older snapshots list them per task
        pending = [i for task in snapshot.tasks for i in task.interrupts]
    for waiting in pending:
        value = waiting.value
        if isinstance(value, dict) and value.get(MARK) and value.get("escalationId") == escalation_id:
            return waiting.id
    return None
