"""The guard runtime: enforce a contract's autonomy mode around one LLM call.

``escalated contracts apply`` rewrites ``client.create(...)`` into
``guard("<contract id>", lambda: client.create(...))`` (``await guard(...)``
for async calls). The contract, found in ``escalated.contracts.toml``, says
what happens around the call:

- ``autonomous``: the result is returned untouched; nothing is filed.
- ``sampled``: the result is returned; a deterministic share of calls (a hash
  of run id, contract id and call ordinal against ``sample_rate``) is filed
  for review after the fact.
- ``reviewed``: the result is returned; every call is filed for review.
- ``required``: the result is held back, filed as an escalation with the
  output as evidence, and returned only once a reviewer picks one of the
  contract's ``approve_choices``. Any other outcome raises; a server that
  cannot be reached fails closed.

Server: ``ESCALATED_URL`` and ``ESCALATED_API_KEY``. Run id: ``run_context()``
or ``ESCALATED_RUN_ID`` (else one per process). Agent id: ``ESCALATED_AGENT_ID``
or the contract id's module. ``required`` waits without limit (a policy's
SLA resolves the escalation on the server) unless ``ESCALATED_GUARD_WAIT_S``
caps it; past the cap the guard fails closed. Contracts file: found above
the calling module, or ``ESCALATED_CONTRACTS``. All HTTP runs on one
background event loop, so
the guard behaves the same from sync code, from async code, and from sync
code called inside a running loop; reviews filed there never block the
caller, and their failures are logged, never swallowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import os
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar, cast

import attrs

from escalated.agent.toolcall import ToolCall, describe
from escalated.domain.limits import MAX_TEXT_CHARS
from escalated.domain.models import CANCELLED, RESOLVED
from escalated.guard.contracts import CONTRACTS_FILENAME, Contract, ContractCache
from escalated.guard.render import GuardedContext, GuardedRunStream, buffer_async, buffer_sync, is_context_manager
from escalated.guard import backend as guard_backend
from escalated.guard.errors import ContractNotFound, EscalationRejected, GuardError, GuardFailedClosed

__all__ = [
    "ContractNotFound",
    "EscalationRejected",
    "GuardError",
    "GuardFailedClosed",
    "flush",
    "guard",
    "guard_async",
    "run_context",
    "shutdown",
]

T = TypeVar("T")

# The model's output as evidence: within one text of the server's limits,
# with room for the label and the cut marker.
EVIDENCE_MAX_CHARS = MAX_TEXT_CHARS - 100
# A guarded tool's result beside its call (reviewed and sampled modes): the
# call's own description takes most of what one escalation may hold.
TOOL_RESULT_MAX_CHARS = 4_000
_run_id: ContextVar[str | None] = ContextVar("escalated_run_id", default=None)


# -- public API ------------------------------------------------------------


def guard(contract_id: str, thunk: Callable[[], T], /) -> T | Awaitable[T]:
    """Call ``thunk`` under the contract's mode.

    When ``thunk()`` returns an awaitable the guard returns a coroutine, so
    ``await guard("id", lambda: client.acreate(...))`` works as well.
    """
    contract = _contract_for(contract_id, caller_file=sys._getframe(1).f_code.co_filename)
    if contract.mode == "autonomous":
        return thunk()
    call = _next_call(contract)
    result = thunk()
    if inspect.isawaitable(result):
        return _finish_async(contract, call, result)
    if hasattr(result, "__anext__"):  # an async stream handed out without await
        return cast(T, _guarded_async_iter(contract, call, result))  # a stream for a stream
    if callable(getattr(result, "stream_events", None)):  # Runner.run_streamed: the run is still to come
        return GuardedRunStream(result, settle=lambda text: _settle_async(contract, call, text))
    if is_context_manager(result):  # with client.messages.stream(...) as stream
        return GuardedContext(
            result,
            finish=lambda inner: _finish_sync(contract, call, inner),
            finish_async=lambda inner: _finish_async(contract, call, inner),
        )
    return _finish_sync(contract, call, result)


def guard_async(contract_id: str, thunk: Callable[[], Any], /) -> Awaitable[Any]:
    """The explicit async twin: always returns a coroutine; the thunk may be sync or async."""
    contract = _contract_for(contract_id, caller_file=sys._getframe(1).f_code.co_filename)

    async def run() -> Any:
        call = _next_call(contract)
        result = thunk()
        if contract.mode == "autonomous":
            return await result if inspect.isawaitable(result) else result
        return await _finish_async(contract, call, result)

    return run()


@contextlib.contextmanager
def run_context(run_id: str) -> Iterator[None]:
    """Guards inside this block (and tasks started from it) use ``run_id``."""
    token = _run_id.set(run_id)
    try:
        yield
    finally:
        _run_id.reset(token)


def flush(*, timeout_s: float = 10.0) -> bool:
    """Wait for reviews still being filed; True when none is left."""
    return guard_backend.flush(timeout_s=timeout_s)


def shutdown(*, timeout_s: float = 10.0) -> None:
    """Flush pending reviews, close connections and stop the background loop (also run at exit)."""
    guard_backend.shutdown(timeout_s=timeout_s)


# -- one call ----------------------------------------------------------------


@attrs.frozen
class _Call:
    run_id: str
    ordinal: int
    agent_id: str


_ordinals: dict[tuple[str, str], int] = {}
_ordinals_lock = threading.Lock()
_process_run_id = f"run-{uuid.uuid4().hex}"


def current_run_id() -> str:
    return _run_id.get() or os.environ.get("ESCALATED_RUN_ID") or _process_run_id


def _next_call(contract: Contract) -> _Call:
    run_id = current_run_id()
    with _ordinals_lock:
        ordinal = _ordinals.get((run_id, contract.id), 0)
        _ordinals[(run_id, contract.id)] = ordinal + 1
        if len(_ordinals) > 100_000:  # long-lived processes with a run id per request
            del _ordinals[next(iter(_ordinals))]
    agent_id = os.environ.get("ESCALATED_AGENT_ID") or contract.id.split(".", 1)[0]
    return _Call(run_id=run_id, ordinal=ordinal, agent_id=agent_id)


def sampled(contract: Contract, call: _Call) -> bool:
    """The same run, contract and ordinal always give the same answer, on any machine."""
    digest = hashlib.sha256(f"{call.run_id}\0{contract.id}\0{call.ordinal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < (contract.sample_rate or 0.0)


def _finish_sync(contract: Contract, call: _Call, result: Any) -> Any:
    if contract.mode == "sampled" and not sampled(contract, call):
        return result
    value, text = buffer_sync(result)
    if contract.mode == "required":
        if _loop_running():
            raise GuardFailedClosed(
                f"contract {contract.id!r}: a required decision would block the running event loop; "
                "await the guard (await guard(...) around an async call, or guard_async) instead; "
                "the result is not used"
            )
        escalation = guard_backend.backend().decide_blocking(_request(contract, call, text))
        return _verdict(contract, escalation, value)
    guard_backend.backend().file_review(_request(contract, call, text))
    return value


async def _finish_async(contract: Contract, call: _Call, result: Any) -> Any:
    if inspect.isawaitable(result):
        result = await result
    if contract.mode == "sampled" and not sampled(contract, call):
        return result
    value, text = await buffer_async(result)
    if contract.mode == "required":
        escalation = await guard_backend.backend().decide(_request(contract, call, text))
        return _verdict(contract, escalation, value)
    guard_backend.backend().file_review(_request(contract, call, text))
    return value


async def _settle_async(contract: Contract, call: _Call, text: str, *, tool_call: ToolCall | None = None) -> None:
    """Review or decide on an output already read (a streamed run, a tool call): raises unless it may be used."""
    if contract.mode == "sampled" and not sampled(contract, call):
        return
    request = _request(contract, call, text, tool_call=tool_call)
    if contract.mode == "required":
        _verdict(contract, await guard_backend.backend().decide(request), None)
        return
    guard_backend.backend().file_review(request)


def _decide_sync(contract: Contract, call: _Call, text: str, *, tool_call: ToolCall | None = None) -> None:
    """A required decision on ``text`` (or ``tool_call``) from synchronous code: raises unless approved."""
    if _loop_running():
        raise GuardFailedClosed(
            f"contract {contract.id!r}: a required decision would block the running event loop; "
            "make the tool async so the guard can await the decision"
        )
    request = _request(contract, call, text, tool_call=tool_call)
    _verdict(contract, guard_backend.backend().decide_blocking(request), None)


def _review_sync(contract: Contract, call: _Call, text: str, *, tool_call: ToolCall | None = None) -> None:
    if contract.mode == "sampled" and not sampled(contract, call):
        return
    guard_backend.backend().file_review(_request(contract, call, text, tool_call=tool_call))


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _guarded_async_iter(contract: Contract, call: _Call, stream: Any) -> AsyncIterator[Any]:
    async for chunk in await _finish_async(contract, call, stream):
        yield chunk


def _verdict(contract: Contract, escalation: dict, value: Any) -> Any:
    status = escalation.get("status")
    where = f"contract {contract.id!r}, escalation {escalation.get('id')}"
    if status == RESOLVED:
        resolution = escalation.get("resolution") or {}
        choice = resolution.get("choice")
        if choice in contract.approve_choices:
            return value
        by = resolution.get("answeredBy") or resolution.get("resolvedBy") or "?"
        reason = f": {resolution['reason']}" if resolution.get("reason") else ""
        raise EscalationRejected(f"{where}: {by} chose {choice!r}{reason}", escalation=escalation)
    if status == CANCELLED:
        raise EscalationRejected(f"{where} was cancelled", escalation=escalation)
    raise GuardFailedClosed(f"{where}: no decision before the guard's wait ran out")


# -- what is filed ------------------------------------------------------------


@attrs.frozen
class _Request:
    contract_id: str
    mode: str
    fields: dict[str, Any]
    idempotency_key: str


def _request(contract: Contract, call: _Call, output: str, *, tool_call: ToolCall | None = None) -> _Request:
    """What is filed: the model's output, or a tool call described as every adapter describes one."""
    rules = f"; rules {', '.join(contract.rules)}" if contract.rules else ""
    where = _cut(
        f"Call: {contract.provider} {contract.api} in {contract.function} ({contract.path}), "
        f"call #{call.ordinal} of run {call.run_id}",
        1_000,
    )
    if tool_call is None:
        subject = {"type": "llm-call", "id": contract.id, "label": f"{contract.function} ({contract.path})"}
        shown = [f"Model output:\n{_cut(output, EVIDENCE_MAX_CHARS)}"]
    else:
        described = describe(tool_call)
        subject, shown = described.subject, list(described.evidence)
        if output:  # reviewed after the fact: what the tool returned
            shown.append(f"Result: {_cut(output, TOOL_RESULT_MAX_CHARS)}")
    fields = {
        "policy": contract.policy,
        "agent_id": call.agent_id,
        "run_id": call.run_id,
        "subject": subject,
        "question": _cut(contract.question, MAX_TEXT_CHARS - 100),
        "evidence": [*shown, where, f"Mode: {contract.mode}{rules}"],
        "choices": [{"id": c.id, "label": c.label} for c in contract.choices],
    }
    # A re-run of the same run files nothing new: the server replays the
    # original escalation (and its decision) for a repeated key.
    key = f"guard:{call.run_id}:{contract.id}:{call.ordinal}"
    if len(key) > 255:
        key = "guard:" + hashlib.sha256(key.encode()).hexdigest()
    return _Request(contract.id, contract.mode, fields, key)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


# -- contracts -----------------------------------------------------------------


_contracts = ContractCache()


def _contract_for(contract_id: str, *, caller_file: str) -> Contract:
    explicit = os.environ.get("ESCALATED_CONTRACTS")
    path = _contracts.file_for(caller_file, explicit=explicit)
    if path is None:
        raise ContractNotFound(
            f"no {CONTRACTS_FILENAME} found above {caller_file} for contract {contract_id!r}; "
            "set ESCALATED_CONTRACTS to its path"
        )
    contract = _contracts.load(path).get(contract_id)
    if contract is None:
        raise ContractNotFound(f"contract {contract_id!r} is not in {path}")
    return contract
