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

Gating a tool without writing a node (what ``contracts apply`` writes for a
prebuilt agent with a checkpointer): ``@interrupt_for_approval`` under
LangChain's ``@tool`` makes the tool ``interrupt`` with its name and arguments
before its body runs, and ``invoke_with_approvals`` / ``ainvoke_with_approvals``
run the graph, file each such interrupt as one escalation (``runId`` = the
thread id, ``Idempotency-Key`` = ``<thread id>:<interrupt id>``), wait for the
decisions over ``/wait`` and resume with them: an approved call runs its body
once, a rejected one returns the reviewer's words to the model as the tool's
result. LangGraph re-runs an interrupted task from its first line, so this
needs one tool call per task (the prebuilt agent's tool node sends each call
as a task of its own): in a hand-built node running several calls, a resume
would run the others again.

LangChain's ``create_agent`` has its own pause for the same purpose,
``HumanInTheLoopMiddleware(interrupt_on={...})``, which interrupts after the
model's turn, before any gated call runs (one ``HITLRequest`` for the turn's
gated calls, or one ``ToolApprovalRequest`` per call with
``interrupt_mode="per_call"``). The same two functions answer it: each
gated call is one escalation (the tool's name and the model's arguments,
``Idempotency-Key`` = ``<thread id>:<interrupt id>[:<n>]``), and the thread
resumes with the middleware's own decisions, ``{"type": "approve"}`` or
``{"type": "reject", "message": <who said no, and why>}``.

The resume value is a ``dict``: ``escalationId``, ``status`` (``resolved``
or ``cancelled``), and ``choice``, ``reason``, ``response``, ``answeredBy``,
``resolvedBy`` for a decision, or ``reason``, ``cancelledBy`` for a
cancellation. The receiver reads it from the server (``GET``) after the
signature checked out, because a callback body carries no reason.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, TypeVar

try:
    from langgraph.types import Command, interrupt
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("escalated.adapters.langgraph needs LangGraph: pip install 'escalated[langgraph]'") from exc

import attrs

from escalated.adapters.approvals import (
    Approval,
    ApprovalUnavailable,
    approval_of,
    cause_of,
    client_scope,
    file_call,
    in_own_loop,
    rejection_message,
    resume_target,
)
from escalated.agent.client import ApiError, EscalatedClient
from escalated.agent.outcome import Outcome
from escalated.agent.toolcall import APPROVE, REJECT, ToolCall, describe, idempotency_key
from escalated.domain.models import CANCELLED, RESOLVED
from escalated.guard.tools import tool_arguments

__all__ = [
    "ApprovalUnavailable", "ThreadResumer", "ainvoke_with_approvals", "approve_tool_call", "escalate",
    "interrupt_for_approval", "invoke_with_approvals", "resume_by_waiting", "resume_value",
]  # fmt: skip

MARK = "escalated"  # in every interrupt value this module raises, beside escalationId
# The interrupt value of a tool asking approval itself (interrupt_for_approval): MARK is this.
ASKING = "tool_call"
# HumanInTheLoopMiddleware's interrupts: one per gated call, or one per model turn.
PER_CALL, BATCHED = "per_call", "batched"
F = TypeVar("F", bound=Callable[..., Any])


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


def interrupt_for_approval(tool: F) -> F:
    """Under LangChain's ``@tool``: the tool ``interrupt``s with its name and arguments before its body runs.

    Resumed by ``invoke_with_approvals`` with the reviewer's decision: approve
    runs the body, anything else returns the reason to the model instead. The
    wrapper keeps the function's name, signature and docstring, which ``@tool``
    reads for the tool's schema; what the framework passes the tool itself (its
    ``ToolRuntime``, config, state) is not in the arguments the reviewer sees.
    """
    if inspect.iscoroutinefunction(tool):

        @functools.wraps(tool)
        async def asking_async(*args: Any, **kwargs: Any) -> Any:
            approval = _ask(tool, args, kwargs)
            return await tool(*args, **kwargs) if approval.approved else approval.message

        return asking_async  # type: ignore[return-value]

    @functools.wraps(tool)
    def asking(*args: Any, **kwargs: Any) -> Any:
        approval = _ask(tool, args, kwargs)
        return tool(*args, **kwargs) if approval.approved else approval.message

    return asking  # type: ignore[return-value]


def _ask(tool: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Approval:
    # JSON text, so the checkpointer keeps it whatever the values are; a value JSON cannot hold shows its type.
    arguments = json.dumps(tool_arguments(tool, args, kwargs), default=lambda value: f"<{type(value).__name__}>")
    asked = {MARK: ASKING, "tool": getattr(tool, "__name__", "tool"), "arguments": arguments, "description": inspect.getdoc(tool)}
    return approval_from(interrupt(asked))


async def ainvoke_with_approvals(
    graph: Any, input: Any, config: Any, *, policy: str, client: EscalatedClient | None = None, agent_id: str | None = None, **kwargs: Any
) -> Any:
    """``graph.ainvoke(input, config, **kwargs)``, each ``interrupt_for_approval`` or ``HumanInTheLoopMiddleware``
    pause answered by a reviewer, to the end."""
    thread_id = str(config["configurable"]["thread_id"])
    agent = agent_id or getattr(graph, "name", None) or "langgraph"
    async with client_scope(client) as escalated:
        output = await graph.ainvoke(input, config, **kwargs)
        while asking := _asking(await graph.aget_state(config)):
            decisions = await _decide(escalated, asking, policy=policy, run_id=thread_id, agent_id=agent)
            output = await graph.ainvoke(Command(resume=decisions), config, **kwargs)
    return output


def invoke_with_approvals(graph: Any, input: Any, config: Any, *, policy: str, agent_id: str | None = None, **kwargs: Any) -> Any:
    """The same for ``graph.invoke``; the server's address and key come from ``ESCALATED_URL`` / ``ESCALATED_API_KEY``."""
    thread_id = str(config["configurable"]["thread_id"])
    agent = agent_id or getattr(graph, "name", None) or "langgraph"
    output = graph.invoke(input, config, **kwargs)
    while asking := _asking(graph.get_state(config)):
        decisions = in_own_loop(lambda: _decide_from_env(asking, policy=policy, run_id=thread_id, agent_id=agent))
        output = graph.invoke(Command(resume=decisions), config, **kwargs)
    return output


@attrs.frozen
class _Question:
    """One pending interrupt that asks about tool calls, and the resume value its answers make."""

    interrupt_id: str
    calls: tuple[ToolCall, ...]
    kind: str  # ASKING (interrupt_for_approval), PER_CALL or BATCHED (HumanInTheLoopMiddleware)
    allowed: tuple[tuple[str, ...], ...] = ()  # per call, the decisions the middleware accepts

    def answer(self, done: list[dict[str, Any]]) -> Any:
        if self.kind == ASKING:
            return resume_value(done[0])
        if self.kind == PER_CALL:
            return _hitl_decision(self.calls[0], done[0], (APPROVE, REJECT))
        return {"decisions": [_hitl_decision(c, e, a) for c, e, a in zip(self.calls, done, self.allowed, strict=True)]}


def _asking(snapshot: Any) -> list[_Question]:
    """The thread's pending interrupts that ask about tool calls (others are the graph's own)."""
    pending = getattr(snapshot, "interrupts", None)
    if pending is None:  # older snapshots list them per task
        pending = [i for task in snapshot.tasks for i in task.interrupts]
    return [q for q in map(_question, pending) if q is not None]


def _question(waiting: Any) -> _Question | None:
    """``interrupt_for_approval``'s interrupt, or LangChain's ``HumanInTheLoopMiddleware``'s: one
    ``ToolApprovalRequest`` per call (``interrupt_mode="per_call"``) or one ``HITLRequest`` listing a
    model turn's gated calls (the default), answered with ``{"decisions": [...]}`` in their order."""
    value, wid = waiting.value, waiting.id
    if not isinstance(value, dict):
        return None
    if value.get(MARK) == ASKING:
        call = ToolCall(name=value["tool"], call_id=wid, arguments=value["arguments"], description=value.get("description"))
        return _Question(wid, (call,), ASKING)
    if value.get("type") == "tool_approval" and "name" in value:
        call = ToolCall(name=value["name"], call_id=wid, arguments=value.get("args"), description=value.get("description"))
        return _Question(wid, (call,), PER_CALL)
    requests, configs = value.get("action_requests"), value.get("review_configs")
    if not (isinstance(requests, list) and isinstance(configs, list) and requests):
        return None
    calls = tuple(
        ToolCall(name=r["name"], call_id=f"{wid}:{n}", arguments=r.get("args"), description=r.get("description"))
        for n, r in enumerate(requests)
    )  # fmt: skip
    allowed = {c.get("action_name"): tuple(c.get("allowed_decisions") or ()) for c in configs}
    return _Question(wid, calls, BATCHED, tuple(allowed.get(c.name, (APPROVE, REJECT)) for c in calls))


def _hitl_decision(call: ToolCall, escalation: dict[str, Any], allowed: tuple[str, ...]) -> dict[str, str]:
    """The middleware's decision for one call: approve, or reject with who said no and why (the model
    reads it). A tool whose config allows neither reject nor respond is left paused, never run."""
    approval = approval_of(escalation)
    assert approval is not None  # waited until done
    if approval.approved:
        return {"type": APPROVE}
    for kind in (REJECT, "respond"):
        if kind in allowed:
            return {"type": kind, "message": approval.message or ""}
    raise ApprovalUnavailable(
        f"{call.name} was not approved ({escalation['id']}), but HumanInTheLoopMiddleware allows only "
        f"{', '.join(allowed)} for it: the run is left paused"
    )


async def _decide(client: EscalatedClient, asking: list[_Question], *, policy: str, run_id: str, agent_id: str) -> dict[str, Any]:
    """File every call of the pause first, then wait for each: interrupt id -> resume value."""
    filed = [
        (question, [await file_call(client, call, policy=policy, run_id=run_id, agent_id=agent_id) for call in question.calls])
        for question in asking
    ]
    decisions = {}
    for question, escalations in filed:
        done = []
        for escalation in escalations:
            try:
                done.append(await client.wait_until_done(escalation["id"]))
            except ApiError as error:
                raise ApprovalUnavailable(f"lost the reviewer's decision on {escalation['id']}: {cause_of(client, error)}") from error
        decisions[question.interrupt_id] = question.answer(done)
    return decisions


async def _decide_from_env(asking: list[_Question], **kwargs: Any) -> dict[str, Any]:
    async with client_scope(None) as client:
        return await _decide(client, asking, **kwargs)

