"""CrewAI's ``@human_feedback`` flows, with the feedback coming from a reviewer through escalated.

``EscalatedFeedbackProvider`` is a ``HumanFeedbackProvider``: when a
decorated flow method finishes, it files one escalation (the method's
``message`` as the question, its output as JSON evidence, the decorator's
``emit`` outcomes as the choices, ``runId`` = the flow's id) and raises
``HumanFeedbackPending``, so the flow pauses and CrewAI's persistence keeps
it. ``FlowResumer`` (a handler for ``escalated.agent.receiver.make_receiver_app``)
or ``resume_flow`` resumes it with ``Flow.from_pending(...).resume_async(...)``
once the reviewer chose: the chosen outcome routes the flow (``@listen`` of
that outcome), and the reviewer's reason is in ``flow.last_human_feedback.feedback`` (after the outcome and a blank line).

A crew's tool is held by CrewAI's own tool hook instead: ``@approval_required(policy=...)``
under CrewAI's ``@tool`` marks the function, and a ``before_tool_call`` hook (registered once)
files each call of a marked tool as one escalation (the tool's name and arguments, ``runId`` =
the crew's id) and waits for the reviewer: approve lets CrewAI run the tool, anything else blocks
the call, and an ``after_tool_call`` hook gives the model the reviewer's words as the tool's result.

The reviewer picks an outcome, so there is nothing to classify: the flow's
``llm`` (which CrewAI calls to map free-text feedback to an outcome) is not
called. A cancellation resumes with the method's ``default_outcome``; without
one the flow stays paused and ``ApprovalUnavailable`` says so (an outcome is
never guessed).
"""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

try:
    from crewai.flow.async_feedback import HumanFeedbackPending, PendingFeedbackContext
    from crewai.hooks import register_after_tool_call_hook, register_before_tool_call_hook
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("escalated.adapters.crewai needs CrewAI: pip install 'escalated[crewai]'") from exc

import attrs

from escalated.adapters.approvals import (
    Approval,
    ApprovalUnavailable,
    cause_of,
    client_scope,
    file_call,
    in_own_loop,
    resume_target,
    wait_approval,
)
from escalated.agent.client import DEFAULT_URL, ApiError, EscalatedClient
from escalated.agent.outcome import Outcome
from escalated.agent.toolcall import CHOICES, ToolCall, as_evidence_json, idempotency_key
from escalated.domain.models import CANCELLED

__all__ = ["ApprovalUnavailable", "EscalatedFeedbackProvider", "FlowResumer", "approval_required", "resume_flow"]

F = TypeVar("F", bound=Callable[..., Any])

SUBJECT_TYPE = "crewai_flow"
_NOT_A_CHOICE_ID = re.compile(r"[^A-Za-z0-9_.:-]+")


class EscalatedFeedbackProvider:
    """``@human_feedback(..., emit=[...], provider=EscalatedFeedbackProvider(policy="..."))``.

    CrewAI calls a provider synchronously from inside the flow, so it takes
    the server's address and key (default ``ESCALATED_URL`` /
    ``ESCALATED_API_KEY``) rather than a client bound to an event loop.
    """

    def __init__(
        self,
        *,
        policy: str,
        url: str | None = None,
        api_key: str | None = None,
        agent_id: str = "crewai",
        resume_url: str | None = None,
        resume_secret: str | None = None,
    ) -> None:
        self.policy, self.agent_id = policy, agent_id
        self._url, self._api_key = url, api_key
        self.resume_url, self.resume_secret = resume_url, resume_secret

    def __repr__(self) -> str:  # never the key
        return f"EscalatedFeedbackProvider(policy={self.policy!r})"

    def request_feedback(self, context: PendingFeedbackContext, flow: Any) -> str:
        """File the escalation for this pause, then pause the flow (CrewAI persists it)."""
        asked = len(getattr(flow, "human_feedback_history", ()) or ())
        filed = in_own_loop(lambda: self._file(context, key=f"{context.method_name}:{asked}"))
        raise HumanFeedbackPending(context=context, callback_info={"escalationId": filed["id"]})

    async def _file(self, context: PendingFeedbackContext, *, key: str) -> dict:
        resume = resume_target(self.resume_url, self.resume_secret)
        flow_class = context.flow_class.rsplit(".", 1)[-1]
        async with self._client() as client:
            try:
                return await client.create_escalation(
                    policy=self.policy,
                    agent_id=self.agent_id,
                    run_id=context.flow_id,
                    subject={"type": SUBJECT_TYPE, "id": context.flow_id, "label": f"{flow_class}.{context.method_name}"},
                    question=(context.message or f"Review the output of {context.method_name}").strip()[:2_000],
                    evidence=[f"Flow: {flow_class}", f"Step: {context.method_name}", f"Output (JSON): {as_evidence_json(context.method_output)}"],
                    choices=choices_for(context.emit),
                    resume=resume,
                    idempotency_key=idempotency_key(context.flow_id, key),
                )
            except ApiError as error:
                raise ApprovalUnavailable(
                    f"could not ask a reviewer about {flow_class}.{context.method_name} (flow {context.flow_id}): "
                    f"{cause_of(client, error)}"
                ) from error

    def _client(self) -> EscalatedClient:
        api_key = self._api_key or os.environ.get("ESCALATED_API_KEY") or os.environ.get("ESCALATED_TOKEN")
        if not api_key:
            raise ApprovalUnavailable("cannot ask a reviewer: set ESCALATED_API_KEY (or pass api_key=)")
        return EscalatedClient(self._url or os.environ.get("ESCALATED_URL") or DEFAULT_URL, api_key, retry_backoff_s=0.25)


def choices_for(emit: list[str] | None) -> list[dict[str, str]]:
    """The escalation's choices: one per ``emit`` outcome (approve/reject without ``emit``)."""
    if not emit:
        return [dict(c) for c in CHOICES]
    return [{"id": choice_id(outcome), "label": outcome} for outcome in emit]


def choice_id(outcome: str) -> str:
    """An outcome as a choice id (``^[A-Za-z0-9_.:-]{1,64}$``): other characters become ``-``."""
    return _NOT_A_CHOICE_ID.sub("-", outcome).strip("-")[:64] or "outcome"


@attrs.define
class FlowResumer:
    """Resume the paused flow an escalation belongs to, with the reviewer's outcome, once.

    ``FlowResumer(RefundFlow, persistence, client)`` is a receiver handler;
    ``resume(escalation)`` does the same from an escalation already read.
    Returns what the flow returned, or None when the flow no longer waits
    (a repeated callback, or the ``/wait`` fallback was first).
    """

    flow_class: type[Any]  # a CrewAI Flow subclass
    persistence: Any
    client: EscalatedClient
    flow_kwargs: dict[str, Any] = attrs.field(factory=dict)
    on_finished: Callable[[str, Any], Any] | None = None
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)

    async def __call__(self, outcome: Outcome) -> Any:
        return await self.resume(await self.client.get_escalation(outcome.escalation_id))

    async def resume(self, escalation: dict[str, Any]) -> Any:
        async with self._lock:
            flow_id = escalation["runId"]
            try:
                flow = self.flow_class.from_pending(flow_id, self.persistence, **self.flow_kwargs)
            except ValueError:  # nothing pending for that flow: already resumed
                return None
            outcome, feedback = _outcome_of(escalation, flow.pending_feedback)
            # The reviewer picked the outcome: route by it, never by a model's reading of the words.
            flow._collapse_to_outcome = lambda *args, **kwargs: outcome
            result = await flow.resume_async(feedback)
        if self.on_finished is not None:
            self.on_finished(flow_id, result)
        return result


async def resume_flow(flow_class: type, escalation_id: str, *, persistence: Any, client: EscalatedClient, **flow_kwargs: Any) -> Any:
    """Resume the flow waiting on ``escalation_id`` once it is decided (waiting over ``/wait``)."""
    escalation = await client.wait_until_done(escalation_id)
    return await FlowResumer(flow_class, persistence, client, flow_kwargs=flow_kwargs).resume(escalation)


def _outcome_of(escalation: dict[str, Any], pending: PendingFeedbackContext) -> tuple[str, str]:
    """The ``emit`` outcome the reviewer chose, and the feedback text (outcome, then the reason)."""
    emit = pending.emit or [c["id"] for c in CHOICES]
    if escalation["status"] == CANCELLED:
        if not pending.default_outcome:
            raise ApprovalUnavailable(
                f"the escalation for flow {escalation['runId']} was cancelled and {pending.method_name} has no "
                "default_outcome: the flow stays paused"
            )
        reason = (escalation.get("cancellation") or {}).get("reason")
        return pending.default_outcome, pending.default_outcome + (f"\n\n{reason}" if reason else "")
    resolution = escalation["resolution"]
    outcome = next((o for o in emit if choice_id(o) == resolution["choice"]), resolution["choice"])
    return outcome, outcome + (f"\n\n{resolution['reason']}" if resolution.get("reason") else "")



# -- a crew's tools, through CrewAI's tool hooks ---------------------------------

_GATE = "__escalated_approval__"  # on a marked tool function: (policy, agent id)
# The reviewer's words for each blocked call, from its before hook to its after hook (both see the same input dict).
_refusals: dict[int, str] = {}
_hooks: list[Callable[..., Any]] = []


def approval_required(*, policy: str, agent_id: str | None = None) -> Callable[[F], F]:
    """Under CrewAI's ``@tool``: each call of the tool waits for a reviewer in CrewAI's ``before_tool_call`` hook.

    The function is returned as it is, marked; the hooks are registered once for
    the process and act on marked tools only. A call that gets no decision (the
    server cannot be reached, the policy is unknown) is blocked, never run:
    CrewAI runs a tool whose hook raised, so the hook does not raise.
    """

    def mark(tool: F) -> F:
        setattr(tool, _GATE, (policy, agent_id))
        if not _hooks:
            _hooks.extend((_before_tool_call, _after_tool_call))
            register_before_tool_call_hook(_before_tool_call)
            register_after_tool_call_hook(_after_tool_call)
        return tool

    return mark


def _gate_of(context: Any) -> tuple[str, str | None] | None:
    run = getattr(context.tool, "func", None)
    function = getattr(getattr(run, "__self__", None), "func", None) or run  # @tool's Tool._run, bound: .func is ours
    return getattr(function, _GATE, None)


def _before_tool_call(context: Any) -> bool | None:
    gate = _gate_of(context)
    if gate is None:
        return None
    policy, agent_id = gate
    run_id = str(getattr(context.crew, "id", None) or uuid.uuid4())
    agent = agent_id or getattr(context.agent, "role", None) or "crewai"
    call = ToolCall(
        name=context.tool_name, call_id=uuid.uuid4().hex, arguments=dict(context.tool_input),
        description=getattr(context.tool, "description", None),
    )  # fmt: skip
    try:
        approval = in_own_loop(lambda: _ask(call, policy=policy, run_id=run_id, agent_id=agent))
    except Exception as error:  # fail closed: CrewAI would run the tool on a hook's exception
        approval = Approval("", False, f"The call was not run: no reviewer's decision could be had ({error}).")
    if approval.approved:
        return None
    _refusals[id(context.tool_input)] = approval.message or "The call was rejected."
    return False


def _after_tool_call(context: Any) -> str | None:
    return _refusals.pop(id(context.tool_input), None)


async def _ask(call: ToolCall, *, policy: str, run_id: str, agent_id: str) -> Approval:
    async with client_scope(None) as client:
        filed = await file_call(client, call, policy=policy, run_id=run_id, agent_id=agent_id)
        return await wait_approval(client, filed)
