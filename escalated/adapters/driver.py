"""The loop every approval-hook adapter runs, whatever the framework.

A framework module wraps one run in a ``Run``: ``start`` runs it until it
ends or pauses, ``resume`` continues a paused state with the reviewers'
answers, and each returns a ``Step``: where the run got to, the calls it
now waits on, and its state (the framework's own object in one process,
its JSON text in the store). This module does the rest the same way for
all: file each call (one escalation, ``<run_id>:<call id>``), wait or read
the decisions, keep the durable record (``runstore``), and answer a resume
of a finished run with its stored result, running nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from escalated.adapters.approvals import Approval, Paused, file_call, read_approval, wait_approval
from escalated.adapters.runstore import FINISHED, PAUSED, RESUMING, RunStore, RunStoreError
from escalated.agent.client import EscalatedClient
from escalated.agent.toolcall import ToolCall


@attrs.frozen
class Pending:
    """One call the run waits on, and the agent that made it (the escalation's ``agentId``)."""

    call: ToolCall
    agent_id: str


@attrs.frozen
class Step:
    """Where a run got to. ``pending`` empty: finished, with ``result`` (and ``output`` to store)."""

    state: Any
    pending: tuple[Pending, ...] = ()
    result: Any = None
    output: Any = None


class Run(Protocol):
    framework: str

    async def start(self) -> Step: ...

    async def resume(self, state: Any, approvals: dict[str, Approval]) -> Step: ...

    def dump(self, step: Step) -> str: ...

    async def finished(self, record: dict[str, Any]) -> Any: ...


async def run_waiting(run: Run, *, client: EscalatedClient, policy: str, run_id: str) -> Any:
    """One process: file each pause's calls, wait for every decision, continue until the end."""
    step = await run.start()
    while step.pending:
        filed = [(p.call.call_id, await _file(client, p, policy=policy, run_id=run_id)) for p in step.pending]
        approvals = {call_id: await wait_approval(client, escalation) for call_id, escalation in filed}
        step = await run.resume(step.state, approvals)
    return step.result


async def start_durable(
    run: Run, *, runs: RunStore, client: EscalatedClient, policy: str, run_id: str, resume: dict | None
) -> Any:
    """Run until the end or a pause, and keep the record; a start the store already holds resumes."""
    async with runs.locked(run_id):
        if runs.read(run_id) is not None:
            return await _resume_locked(run, runs=runs, client=client, run_id=run_id)
        step = await run.start()
        return await _settle(run, step, runs=runs, client=client, run_id=run_id, policy=policy, resume=resume)


async def resume_durable(run: Run, *, runs: RunStore, client: EscalatedClient, run_id: str) -> Any:
    async with runs.locked(run_id):
        return await _resume_locked(run, runs=runs, client=client, run_id=run_id)


async def _resume_locked(run: Run, *, runs: RunStore, client: EscalatedClient, run_id: str) -> Any:
    record = runs.read(run_id)
    if record is None:
        raise RunStoreError(f"{runs} holds no run {run_id!r}: start it with start_run first")
    if record["status"] == FINISHED:
        return await run.finished(record)
    if record["status"] == RESUMING:
        raise RunStoreError(
            f"run {run_id!r} was being resumed when its process stopped: its approved tools may have run, "
            "so it is not run again; start a new run"
        )
    await _file_missing(record, runs=runs, client=client)
    escalations = record["escalations"]
    approvals = {call_id: await read_approval(client, escalations[call_id]) for call_id in record["pending"]}
    still_open = tuple(escalations[c] for c, approval in approvals.items() if approval is None)
    if still_open:
        return Paused(run_id, still_open)
    # Written before any tool runs: a resume that dies midway is never run a second time.
    runs.write(run_id, **_fields(record, status=RESUMING))
    step = await run.resume(record["state"], approvals)  # type: ignore[arg-type]
    return await _settle(run, step, runs=runs, client=client, run_id=run_id, policy=record["policy"], resume=record.get("resume"))


async def _settle(
    run: Run, step: Step, *, runs: RunStore, client: EscalatedClient, run_id: str, policy: str, resume: dict | None
) -> Any:
    if not step.pending:
        runs.write(run_id, framework=run.framework, status=FINISHED, policy=policy, state=run.dump(step), output=step.output)
        return step.result
    # Kept before filing: should filing fail, the next resume files what is missing.
    record = runs.write(
        run_id,
        framework=run.framework,
        status=PAUSED,
        policy=policy,
        resume=resume,
        state=run.dump(step),
        pending={p.call.call_id: attrs.asdict(p) for p in step.pending},
        escalations={},
    )
    await _file_missing(record, runs=runs, client=client)
    return Paused(run_id, tuple(record["escalations"][call_id] for call_id in record["pending"]))


async def _file_missing(record: dict, *, runs: RunStore, client: EscalatedClient) -> None:
    for call_id, pending in record["pending"].items():
        if call_id in record["escalations"]:
            continue
        filed = await _file(client, _pending(pending), policy=record["policy"], run_id=record["runId"], resume=record.get("resume"))
        record["escalations"][call_id] = filed["id"]
        runs.write(record["runId"], **_fields(record))


async def _file(client: EscalatedClient, pending: Pending, *, policy: str, run_id: str, resume: dict | None = None) -> dict:
    return await file_call(client, pending.call, policy=policy, run_id=run_id, agent_id=pending.agent_id, resume=resume)


def _pending(saved: dict) -> Pending:
    return Pending(call=ToolCall(**saved["call"]), agent_id=saved["agent_id"])


def _fields(record: dict, **changes: Any) -> dict:
    return {**{k: v for k, v in record.items() if k not in ("version", "runId")}, **changes}

