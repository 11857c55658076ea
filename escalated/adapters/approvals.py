"""What every framework adapter does the same way: file a tool call, read the decision.

An adapter maps its framework's pause (an interruption, a deferred call) to
``ToolCall``s; this module files each as one escalation (``agent/toolcall``
describes it), waits for or reads the outcome, and turns it into an
``Approval``: run the tool, or tell the model why not. The rules (who may
decide, timeouts, exactly once) stay in the server. Every failure to reach a
decision is one ``ApprovalUnavailable`` naming its cause; the adapters raise
it before the framework runs anything, so the tool never runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import attrs

from escalated.agent.client import DONE_STATUSES, ApiError, EscalatedClient, ServerUnreachable
from escalated.agent.toolcall import APPROVE, ToolCall, describe, idempotency_key
from escalated.domain.models import CANCELLED, RESOLVED
from escalated.errors import EscalatedError

__all__ = ["Approval", "ApprovalUnavailable", "Paused", "ToolCall"]


class ApprovalUnavailable(EscalatedError):
    """No reviewer's decision could be had for a tool call; the tool did not run."""

    code, title = "approval_unavailable", "Approval unavailable"


@attrs.frozen
class Paused:
    """A durable run waiting for reviewers: resume it with ``resume_run(..., run_id=...)``."""

    run_id: str
    escalation_ids: tuple[str, ...]


@attrs.frozen
class Approval:
    """A reviewer's answer to one call: run it, or return ``message`` to the model instead."""

    escalation_id: str
    approved: bool
    message: str | None = None


def in_own_loop(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run the coroutine ``make()`` to its end from a framework's sync code,
    whether or not this thread already runs an event loop (the framework's own,
    which must not be blocked re-entrantly): on a thread of its own."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="escalated-approval") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


@contextlib.asynccontextmanager
async def client_scope(client: EscalatedClient | None) -> AsyncIterator[EscalatedClient]:
    """The caller's client as it is, or one from ``ESCALATED_URL`` / ``ESCALATED_API_KEY``, closed after."""
    if client is not None:
        yield client
        return
    try:
        owned = EscalatedClient.from_env()
    except EscalatedError as error:
        raise ApprovalUnavailable(f"cannot ask a reviewer: {error}") from error
    async with owned:
        yield owned


async def file_call(
    client: EscalatedClient,
    call: ToolCall,
    *,
    policy: str,
    run_id: str,
    agent_id: str,
    resume: dict[str, Any] | None = None,
) -> dict:
    """File ``call`` as one escalation; a repeat (same run, same call id) replays the first."""
    described = describe(call)
    try:
        return await client.create_escalation(
            policy=policy,
            agent_id=agent_id or "agent",
            run_id=run_id,
            subject=described.subject,
            question=described.question,
            evidence=described.evidence,
            choices=described.choices,
            resume=resume,
            idempotency_key=idempotency_key(run_id, call.call_id),
        )
    except ApiError as error:
        raise ApprovalUnavailable(f"could not ask a reviewer about {call.name} (call {call.call_id}): {cause_of(client, error)}") from error


async def wait_approval(client: EscalatedClient, escalation: dict) -> Approval:
    """Wait (over ``/wait``) until the escalation is decided, timed out or cancelled."""
    try:
        done = escalation if escalation["status"] in DONE_STATUSES else await client.wait_until_done(escalation["id"])
    except ApiError as error:
        raise ApprovalUnavailable(f"lost the reviewer's decision on {escalation['id']}: {cause_of(client, error)}") from error
    approval = approval_of(done)
    assert approval is not None  # wait_until_done without a timeout returns only when done
    return approval


async def read_approval(client: EscalatedClient, escalation_id: str) -> Approval | None:
    """The decision on ``escalation_id``, or None while it is still open."""
    try:
        return approval_of(await client.get_escalation(escalation_id))
    except ApiError as error:
        raise ApprovalUnavailable(f"could not read the decision on {escalation_id}: {cause_of(client, error)}") from error


def resume_target(url: str | None, secret: str | None) -> dict | None:
    """The escalation's ``resume`` for a callback receiver, or None to be resumed by polling."""
    if url is None:
        return None
    return {"mode": "webhook", "url": url, **({"secret": secret} if secret else {})}


def approval_of(escalation: dict) -> Approval | None:
    """A resolved or cancelled escalation as an ``Approval``; None while open.

    A timeout is the policy's default choice, like any other decision. A
    cancellation never runs the tool.
    """
    escalation_id = escalation["id"]
    if escalation["status"] == CANCELLED:
        cancellation = escalation.get("cancellation") or {}
        because = f": {cancellation['reason']}" if cancellation.get("reason") else ""
        return Approval(escalation_id, False, f"The approval was cancelled by {cancellation.get('cancelledBy', '?')}{because}.")
    if escalation["status"] != RESOLVED:
        return None
    resolution = escalation["resolution"]
    if resolution["choice"] == APPROVE:
        return Approval(escalation_id, True)
    return Approval(escalation_id, False, rejection_message(resolution))


def rejection_message(resolution: dict) -> str:
    """What the model is told instead of the tool's result: who said no, and why."""
    if resolution.get("resolvedBy") == "timeout":
        said = "No reviewer decided in time; the policy's default is to reject the call."
    else:
        said = f"The call was rejected by {resolution.get('answeredBy') or 'a reviewer'}."
    reason = resolution.get("reason")
    return f"{said} Reason: {reason}" if reason else said


def cause_of(client: EscalatedClient, error: ApiError) -> str:
    if isinstance(error, ServerUnreachable):
        return f"the escalated server at {client.base_url} cannot be reached ({error.detail})"
    hint = {
        "unknown_policy": "; create it with `escalated policy set` or pass an existing policy",
        "insufficient_scope": "; this API key may not file escalations (it needs escalations:write)",
        "unauthenticated": "; check ESCALATED_API_KEY",
        "idempotency_key_reused": "; this run id already filed a different call under this call id: use a new run id",
        "default_choice_not_offered": "; the policy's default choice must be approve or reject",
    }.get(error.code, "")
    return f"{error}{hint}"
