"""Which discovered calls are covered by a contract and its guard, and which contracts are stale.

A call is covered when a contract locates it (path, function, index,
provider, api) and the call is wrapped as ``guard("<that id>", lambda: …)``.
A call behind a human gate the code already has (LangGraph ``interrupt``,
OpenAI Agents ``needs_approval``) counts as covered too, so nothing is gated
twice. A contract that locates no call is stale.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import attrs

from escalated.guard.contracts import ContractSet, find_contracts_file, load_contracts_file
from escalated.contracts.calls import LlmCall, ScanResult
from escalated.contracts.scan.apis import UNWRAPPED


@attrs.frozen
class CallStatus:
    call: LlmCall
    covered: bool
    contract_id: str | None
    contract_mode: str | None
    # "guard" | "existing-gate" | None; or why it is not covered.
    covered_by: str | None
    problem: str | None


@attrs.frozen
class StaleContract:
    id: str
    path: str  # as the contract says: relative to the contracts file's folder
    function: str
    index: int
    scan_path: str  # the same file relative to the scanned root, for SARIF locations


@attrs.frozen
class Coverage:
    statuses: tuple[CallStatus, ...]
    stale: tuple[StaleContract, ...]

    @property
    def ok(self) -> bool:
        return all(s.covered for s in self.statuses) and not self.stale


def project_contracts(root: Path) -> tuple[ContractSet, str, str | None]:
    """The contracts governing ``root``, the prefix from their project root to ``root``, and the file."""
    start = root if root.is_dir() else root.parent
    found = find_contracts_file(start)
    if found is None:
        return ContractSet(), "", None
    try:
        prefix = start.resolve().relative_to(found.parent.resolve()).as_posix()
    except ValueError:  # pragma: no cover - find_contracts_file only looks upward
        prefix = ""
    prefix = "" if prefix == "." else prefix
    label = PurePosixPath(prefix and "/".join(".." for _ in prefix.split("/"))) / found.name if prefix else found.name
    return load_contracts_file(found), prefix, str(label)


def check(result: ScanResult, contracts: ContractSet, *, prefix: str = "", single_file: str | None = None) -> Coverage:
    statuses = tuple(_status(call, contracts, prefix) for call in result.calls)
    # A contract names its call's provider and API too: another call now at its index is not its call.
    found = {(*_project_key(c, prefix), c.provider, c.api) for c in result.calls}
    scanned = {f"{prefix}/{p}" if prefix else p for p in ((single_file,) if single_file else ())}
    stale = []
    for contract in sorted(contracts.contracts.values(), key=lambda c: c.id):
        inside = contract.path.startswith(prefix + "/") if prefix else True
        if single_file is not None:
            inside = contract.path in scanned
        if inside and (*contract.key, contract.provider, contract.api) not in found:
            scan_path = contract.path[len(prefix) + 1 :] if prefix else contract.path
            stale.append(StaleContract(contract.id, contract.path, contract.function, contract.index, scan_path))
    return Coverage(statuses, tuple(stale))


def _project_key(call: LlmCall, prefix: str) -> tuple[str, str, int]:
    path = f"{prefix}/{call.location.path}" if prefix else call.location.path
    return (path, call.function, call.index)


def _status(call: LlmCall, contracts: ContractSet, prefix: str) -> CallStatus:
    located = attrs.evolve(call, location=attrs.evolve(call.location, path=_project_key(call, prefix)[0]))
    contract = contracts.match(located)
    contract_id = contract.id if contract else None
    mode = contract.mode if contract else None
    if contract is not None and call.guarded and call.guard_id == contract.id:
        if mode == "required" and call.unguarded_tools:
            # The run's tools act inside the call: a guard around it decides after they ran.
            names = ", ".join(f"{t.name} ({t.path}:{t.line})" for t in call.unguarded_tools)
            problem = f"the guard around the run decides after its tools ran; not guarded at the tool: {names}"
            return CallStatus(call, False, contract_id, mode, None, problem)
        if mode == "required" and call.unseen_tools:
            problem = f"the guard around the run decides after its tools ran, and the scan could not see these tools: {'; '.join(call.unseen_tools)}"
            return CallStatus(call, False, contract_id, mode, None, problem)
        return CallStatus(call, True, contract_id, mode, "guard", None)
    if call.existing_gate is not None:
        return CallStatus(call, True, contract_id, mode, "existing-gate", None)
    if contract is not None and call.api in UNWRAPPED and call.runner and call.risky_tools:
        # An ADK root_agent has no call to wrap: its risky tools, each guarded, are its guard.
        if not call.unguarded_tools and not call.unseen_tools:
            return CallStatus(call, True, contract_id, mode, "guard", None)
    if contract is None and call.guarded:
        problem = f"guarded as {call.guard_id!r}, but no contract locates this call"
    elif contract is None:
        problem = "no contract"
    elif not call.guarded and call.api in UNWRAPPED:
        problem = f"contract {contract.id!r} exists, but {UNWRAPPED[call.api]}"
    elif not call.guarded:
        problem = f"contract {contract.id!r} exists, but the call is not wrapped in its guard"
    else:
        problem = f"wrapped in guard {call.guard_id!r}, but its contract is {contract.id!r}"
    return CallStatus(call, False, contract_id, mode, None, problem)
