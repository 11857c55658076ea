"""``contracts apply``: build the whole change set, validate it, write all or nothing.

A call that cannot be wrapped validly (the rewritten file would not compile)
is skipped with its reason and the file's other calls are still wrapped; the
change set that is written is always fully validated.

The order is the point: every changed file is rewritten in memory first, each
one must parse, compile and come out unchanged from a second apply, and only
then, after one confirmation, are the files replaced — each through a
temporary file and ``os.replace`` — and only if none changed on disk since it
was read.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import attrs
import libcst as cst

from escalated.contracts.deep import with_deep_stack
from escalated.contracts.scan.apis import UNWRAPPED
from escalated.guard.contracts import ContractSet
from escalated.contracts.calls import Location, LlmCall
from escalated.contracts.edit.approvals import approval_framework, with_approvals
from escalated.contracts.edit.rewrite import Rewritten, Skip, Target, rewrite_source
from escalated.contracts.edit.tool_guard import ToolTarget, decorate_tools
from escalated.errors import ConfigError

ScanSource = Callable[[str, str], Sequence[LlmCall]]


class ApplyError(ConfigError):
    code, title = "apply_failed", "Apply failed"


class FileChangedOnDisk(ApplyError):
    code, title = "file_changed", "File changed on disk"


@attrs.frozen
class FileChange:
    path: str  # POSIX, relative to the root
    original: bytes
    new: bytes
    encoding: str
    wrapped: tuple[Target, ...]
    # Tool functions decorated with @guard_tool (agent runners under a required contract).
    tools_guarded: tuple[ToolTarget, ...] = ()
    # (contract id, policy) of the Runner.run calls rewritten to run_with_approvals.
    approvals: tuple[tuple[str, str], ...] = ()

    def diff(self) -> str:
        old = self.original.decode(self.encoding, errors="replace").splitlines(keepends=True)
        new = self.new.decode(self.encoding, errors="replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, fromfile=f"a/{self.path}", tofile=f"b/{self.path}")
        return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)


@attrs.frozen
class ChangeSet:
    changes: tuple[FileChange, ...]
    skipped: tuple[Skip, ...]
    already_guarded: int

    @property
    def wrapped_count(self) -> int:
        return sum(len(c.wrapped) for c in self.changes)

    @property
    def tools_count(self) -> int:
        return sum(len(c.tools_guarded) for c in self.changes)

    def diff(self) -> str:
        return "".join(c.diff() for c in self.changes)


def session_skips(calls: Iterable[LlmCall], contracts: ContractSet, *, prefix: str = "") -> list[Skip]:
    """Contracted realtime sessions: never wrapped, always said why."""
    out = []
    for call in calls:
        project_path = f"{prefix}/{call.location.path}" if prefix else call.location.path
        contract = contracts.match(attrs.evolve(call, location=attrs.evolve(call.location, path=project_path)))
        if call.api in UNWRAPPED and contract is not None and not call.guarded:
            out.append(Skip(call.location, contract.id, UNWRAPPED[call.api]))
    return out


def targets_for(calls: Iterable[LlmCall], contracts: ContractSet, *, prefix: str = "") -> dict[str, list[Target]]:
    """Per file, the calls a contract covers, as rewrite targets (guarded ones included).

    Call paths are relative to the scanned folder; ``prefix`` leads from the
    project root (where the contracts file is) to that folder.
    """
    by_path: dict[str, list[Target]] = defaultdict(list)
    for call in calls:
        if call.api in UNWRAPPED:
            continue  # not wrappable: see session_skips
        project_path = f"{prefix}/{call.location.path}" if prefix else call.location.path
        contract = contracts.match(attrs.evolve(call, location=attrs.evolve(call.location, path=project_path)))
        if contract is not None:
            by_path[call.location.path].append(Target(call.location, contract.id))
    return dict(by_path)


def tool_targets_for(
    calls: Iterable[LlmCall], contracts: ContractSet, *, prefix: str = ""
) -> tuple[dict[str, list[ToolTarget]], list[Skip]]:
    """Per file, the risky tool functions of agent runs under a ``required`` contract.

    A guard around ``Runner.run`` decides after the tools ran, so each risky
    tool the run reaches is guarded at the tool with the run's contract. A tool
    reached by several runs takes the first contract id in sorted order.
    """
    chosen: dict[tuple[str, str], ToolTarget] = {}
    skipped: list[Skip] = []
    for call in calls:
        project_path = f"{prefix}/{call.location.path}" if prefix else call.location.path
        contract = contracts.match(attrs.evolve(call, location=attrs.evolve(call.location, path=project_path)))
        if contract is None or contract.mode != "required" or not call.runner:
            continue
        framework = approval_framework(call)
        for site in call.unguarded_tools:
            if site.function is None:
                where = Location(site.path, site.line, 0, site.line, 0)
                reason = f"tool {site.name} is not a function of the project: guard it at the tool by hand"
                skipped.append(Skip(where, contract.id, reason))
                continue
            # The run goes through an adapter's run_with_approvals: the tools ask the framework's own
            # approval (a Pydantic AI or LangGraph tool only beside its run, which apply routes through the
            # adapter too); a CrewAI tool's hook needs nothing of the run.
            approval = framework if framework in {"agents", "crewai"} or site.path == call.location.path else ""
            target = ToolTarget(
                site.path, site.function, site.line, site.name, contract.id, call.tools_in_loop, approval, contract.policy
            )  # fmt: skip
            key = (site.path, site.function)
            if key in chosen:
                earlier = chosen[key]
                target = attrs.evolve(
                    min(earlier, target, key=lambda t: t.contract_id),
                    awaitable=earlier.awaitable or target.awaitable, approval=earlier.approval if earlier.approval == target.approval else "",
                )  # fmt: skip
            chosen[key] = target
    by_path: dict[str, list[ToolTarget]] = defaultdict(list)
    for key in sorted(chosen):
        by_path[key[0]].append(chosen[key])
    return dict(by_path), sorted(set(skipped), key=lambda s: (s.location, s.contract_id, s.reason))


def approvals_for(calls: Iterable[LlmCall], contracts: ContractSet, *, prefix: str = "") -> dict[str, dict[str, str]]:
    """Per file, contract id -> policy of each Agents SDK ``Runner.run``, Pydantic AI ``agent.run``, LangGraph
    ``invoke``, Agno ``agent.run`` / ``arun`` and Agent Framework ``agent.run`` under a ``required`` contract: apply runs it through the
    adapter's ``run_with_approvals`` (approvals.py)."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for call in calls:
        project_path = f"{prefix}/{call.location.path}" if prefix else call.location.path
        contract = contracts.match(attrs.evolve(call, location=attrs.evolve(call.location, path=project_path)))
        if contract is not None and contract.mode == "required" and approval_framework(call):
            out[call.location.path][contract.id] = contract.policy
    return dict(out)


def rewrite_file(
    original: bytes,
    targets: list[Target],
    tools: list[ToolTarget],
    approvals: Mapping[str, str] | None = None,
    toolkit_skips: Sequence[Skip] = (),
) -> tuple[Rewritten, tuple[ToolTarget, ...], list[Skip]]:
    """Wrap the calls, then guard the tools: the new source, the tools decorated, the skips.

    ``toolkit_skips`` are this file's tools that are no functions of the project: those of an Agno
    toolkit apply made confirm its risky tools (approvals.py) are dropped, the others returned."""
    result = rewrite_source(original, targets)
    done: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    confirmed: frozenset[str] = frozenset()
    if approvals:
        asked: dict[str, list[str]] = {}
        for t in tools:
            if t.approval == "langgraph":
                asked.setdefault(t.contract_id, []).append(t.name)
        module, done, held, confirmed = with_approvals(cst.parse_module(result.code), approvals, asked)
        if done:
            result = attrs.evolve(result, code=module.bytes)
    left = [s for s in toolkit_skips if not any(s.reason.startswith(f"tool {name} ") for name in confirmed)]
    # A Pydantic AI, LangGraph, Agno or Agent Framework run (always in this file with its tools) apply could not
    # route through the adapter: its tools take guard_tool, never a deferral, an interrupt or a pause nobody answers.
    routed_only = {"pydantic", "langgraph", "agno", "maf"}
    tools = [attrs.evolve(t, approval="") if t.approval in routed_only and t.contract_id not in done else t for t in tools]
    # A create_agent run's tools are held by its HumanInTheLoopMiddleware now: no decorator.
    in_middleware = tuple(t for t in tools if t.approval == "langgraph" and t.contract_id in held)
    tools = [t for t in tools if t not in in_middleware]
    if not tools:
        return result, in_middleware, left
    decorated = decorate_tools(cst.parse_module(result.code), tools)
    skips = left + [Skip(Location(t.path, t.line, 0, t.line, 0), t.contract_id, f"tool {t.name}: {why}") for t, why in decorated.skipped]
    if not decorated.guarded:
        return result, in_middleware, skips
    return attrs.evolve(result, code=decorated.module.bytes), (*in_middleware, *decorated.guarded), skips


@with_deep_stack
def build_change_set(
    root: Path, *, calls: Iterable[LlmCall], contracts: ContractSet, prefix: str = "", scan_source: ScanSource
) -> ChangeSet:
    """Rewrite every covered call in memory and validate the result; writes nothing.

    ``root`` is the scanned folder; call paths are relative to it.
    """
    calls = tuple(calls)
    changes: list[FileChange] = []
    skipped: list[Skip] = session_skips(calls, contracts, prefix=prefix)
    guarded = 0
    call_targets = targets_for(calls, contracts, prefix=prefix)
    tool_targets, tool_skips = tool_targets_for(calls, contracts, prefix=prefix)
    runs = approvals_for(calls, contracts, prefix=prefix)
    pending: dict[str, list[Skip]] = defaultdict(list)  # per file: tools to guard by hand, unless apply gates them there
    for skip in tool_skips:
        pending[skip.location.path].append(skip)
    for rel in sorted(set(call_targets) | set(tool_targets)):
        targets, tools, approvals = call_targets.get(rel, []), tool_targets.get(rel, []), runs.get(rel, {})
        try:
            original = (Path(root) / rel).read_bytes()
            encoding = cst.parse_module(original).encoding
        except (OSError, cst.ParserSyntaxError) as exc:
            raise ApplyError(f"{rel}: cannot be read or parsed ({exc}); nothing was written") from exc
        result, tools_guarded, tool_skips = rewrite_file(original, targets, tools, approvals, pending.pop(rel, []))
        skipped += result.skipped + tuple(tool_skips)
        guarded += len(result.already_guarded)
        if result.code == original and not tools_guarded:
            continue
        change = FileChange(rel, original, result.code, encoding, result.wrapped, tools_guarded, tuple(sorted(approvals.items())))
        kept: FileChange | None = change
        if _problems(change, contracts=contracts, prefix=prefix, scan_source=scan_source):
            kept, rejected = _without_bad_calls(change, contracts=contracts, prefix=prefix, scan_source=scan_source)
            skipped += rejected
        if kept is not None:
            changes.append(kept)
    skipped += [skip for left in pending.values() for skip in left]
    # Every change kept above passed ``_problems`` (validate's checks) as it is: checking the set again
    # repeated each file's rescan and second rewrite, about a third of an apply's CPU.
    return ChangeSet(tuple(changes), tuple(skipped), guarded)


def _without_bad_calls(
    change: FileChange, *, contracts: ContractSet, prefix: str, scan_source: ScanSource
) -> tuple[FileChange | None, list[Skip]]:
    """One call that cannot be wrapped (an async comprehension in its arguments) is skipped
    with the reason; the file's other calls are still wrapped."""
    kept: list[Target] = []
    rejected: list[Skip] = []
    best: FileChange | None = None
    tools, approvals = list(change.tools_guarded), dict(change.approvals)
    if tools:  # the tools alone, should no call be wrappable
        result, guarded_tools, _skips = rewrite_file(change.original, [], tools, approvals)
        trial = FileChange(change.path, change.original, result.code, change.encoding, (), guarded_tools, change.approvals)
        best = None if _problems(trial, contracts=contracts, prefix=prefix, scan_source=scan_source) else trial
    for target in change.wrapped:
        result, guarded_tools, _skips = rewrite_file(change.original, [*kept, target], tools, approvals)
        trial = FileChange(change.path, change.original, result.code, change.encoding, result.wrapped, guarded_tools, change.approvals)
        problems = _problems(trial, contracts=contracts, prefix=prefix, scan_source=scan_source)
        if problems:
            rejected.append(Skip(target.location, target.contract_id, f"not wrapped: {problems[0]}"))
        else:
            kept.append(target)
            best = trial
    return best, rejected


def validate(change_set: ChangeSet, *, contracts: ContractSet, prefix: str = "", scan_source: ScanSource) -> None:
    """Each changed file parses, compiles, scans as guarded, and a second apply leaves it as it is."""
    problems = [
        problem
        for change in change_set.changes
        for problem in _problems(change, contracts=contracts, prefix=prefix, scan_source=scan_source)
    ]
    if problems:
        raise ApplyError("validation failed; nothing was written:\n  " + "\n  ".join(problems))


def _problems(change: FileChange, *, contracts: ContractSet, prefix: str, scan_source: ScanSource) -> list[str]:
    try:
        _check_compiles(change)
        rescanned = scan_source(change.new.decode(change.encoding), change.path)
        # Calls skipped on purpose stay skipped; only the wrapped ones must be left as they are.
        wrapped_ids = {t.contract_id for t in change.wrapped}
        again = [t for t in targets_for(rescanned, contracts, prefix=prefix).get(change.path, []) if t.contract_id in wrapped_ids]
        again_tools = tool_targets_for(rescanned, contracts, prefix=prefix)[0].get(change.path, [])
        second, second_tools, _skips = rewrite_file(change.new, again, again_tools, dict(change.approvals))
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as exc:
        return [f"{change.path}: the rewritten file does not compile: {exc}"]
    changes_again = second.code != change.new or bool(second_tools)
    problems = [f"{change.path}: a second apply would change the file again"] if changes_again else []
    guarded = {c.guard_id for c in rescanned if c.guarded}
    problems += [
        f"{change.path}: the call wrapped for {t.contract_id!r} does not scan as guarded"
        for t in change.wrapped
        if t.contract_id not in guarded
    ]
    return problems


def _check_compiles(change: FileChange) -> None:
    """The new file compiles, unless the original does not compile on this Python either.

    A project written for a newer Python (PEP 695 generics, say) cannot be
    compiled here; then libcst's parse (in the rescan) is the check, so one
    such file does not block the rest of the change set.
    """
    try:
        compile(change.original, change.path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return
    compile(change.new, change.path, "exec", dont_inherit=True)


def write_change_set(root: Path, change_set: ChangeSet) -> None:
    """Write every file or none: refuse if any file differs from what was read."""
    root = Path(root)
    for change in change_set.changes:
        _check_unchanged(root / change.path, change)
    staged: list[tuple[Path, Path]] = []
    try:
        for change in change_set.changes:
            staged.append((_stage(root / change.path, change.new), root / change.path))
        for change in change_set.changes:
            _check_unchanged(root / change.path, change)
        _replace_all(staged, change_set)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)


def _check_unchanged(path: Path, change: FileChange) -> None:
    try:
        current = path.read_bytes()
    except OSError as exc:
        raise FileChangedOnDisk(f"{change.path} can no longer be read ({exc}); nothing was written") from exc
    if current != change.original:
        raise FileChangedOnDisk(f"{change.path} changed on disk since it was read; nothing was written")


def _stage(path: Path, data: bytes) -> Path:
    """A temporary file beside ``path`` (same file system, so the replace is atomic)."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".escalated-tmp", dir=path.parent)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(name, path.stat().st_mode & 0o7777)
    return Path(name)


def _replace_all(staged: list[tuple[Path, Path]], change_set: ChangeSet) -> None:
    done: list[int] = []
    try:
        for i, (tmp, dest) in enumerate(staged):
            os.replace(tmp, dest)
            done.append(i)
    except OSError:
        # Put back what was already replaced so the tree is never half-applied.
        for i in done:
            staged[i][1].write_bytes(change_set.changes[i].original)
        raise
