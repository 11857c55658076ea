"""``contracts init`` without the prompts: which calls need a contract, how a draft
reads, how an edit is parsed. The click loop in ``edit.cli`` drives these.

Contract paths are relative to the project root — the directory of the
nearest ``escalated.contracts.toml`` above PATH, or PATH itself when there is
none yet — so ``init src/`` and ``scan .`` agree on every contract.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import libcst as cst

from escalated.guard.contracts import (
    CONTRACTS_FILENAME,
    Choice,
    Contract,
    ContractFileError,
    ContractSet,
    dump_contracts,
    toml_string,
    validate_contract,
)
from escalated.contracts.report.coverage import check, project_contracts
from escalated.contracts.scan.config import load_options
from escalated.contracts.scan.discovery import scan_tree
from escalated.contracts.edit.drafts import draft_contract
from escalated.contracts.calls import LlmCall, Location, ParseProblem
from escalated.guard.modes import MODE_NAMES
from escalated.contracts.edit.remote import call_context
from escalated.contracts.edit.rewrite import Target, rewrite_source


@attrs.frozen
class Candidate:
    """An uncovered call with no contract: ``call`` as scanned, paths as the project sees them."""

    call: LlmCall  # location.path relative to the project root
    file: Path  # the file on disk
    # Why ``apply`` could not wrap this call automatically, if it could not.
    wrap_problem: str | None = None


@attrs.frozen
class InitPlan:
    project_root: Path
    contracts: ContractSet
    candidates: tuple[Candidate, ...]
    errors: tuple[ParseProblem, ...]
    total_calls: int
    # Calls a contract locates but that are not wrapped in its guard yet.
    awaiting_apply: int = 0
    # Contracts that locate no call any more (an index shifted, or the call is gone).
    stale_ids: frozenset[str] = frozenset()


def plan_init(path: Path) -> InitPlan:
    """Scan ``path`` and list the calls no contract locates yet (gated calls excepted)."""
    path = Path(path)
    base = path if path.is_dir() else path.parent
    contracts, prefix, _label = project_contracts(path)
    project_root = base
    for _ in prefix.split("/") if prefix else ():
        project_root = project_root.parent
    result = scan_tree(path, options=load_options(path))
    coverage = check(result, contracts, prefix=prefix)
    candidates = []
    awaiting_apply = sum(1 for s in coverage.statuses if s.contract_id is not None and not s.covered)
    for status in coverage.statuses:
        if status.contract_id is not None or status.covered:
            continue
        call = status.call
        located = attrs.evolve(call, location=attrs.evolve(call.location, path=_join(prefix, call.location.path)))
        candidates.append(Candidate(located, base / call.location.path))
    candidates = _with_wrap_problems(candidates)
    stale_ids = frozenset(s.id for s in coverage.stale)
    total = len(result.calls)
    return InitPlan(project_root, contracts, tuple(candidates), result.errors, total, awaiting_apply, stale_ids)


def _with_wrap_problems(candidates: list[Candidate]) -> list[Candidate]:
    """Ask the rewrite, per file, which candidates it would have to skip, so init can say so now."""
    by_file: dict[Path, list[Candidate]] = {}
    for candidate in candidates:
        by_file.setdefault(candidate.file, []).append(candidate)
    problems: dict[tuple[Path, Location], str] = {}
    for file, group in by_file.items():
        targets = [Target(c.call.location, f"probe{i}") for i, c in enumerate(group)]
        try:
            result = rewrite_source(file.read_bytes(), targets, check_only=True)
        except (OSError, cst.ParserSyntaxError):
            continue
        problems.update({(file, skip.location): skip.reason for skip in result.skipped})
    return [attrs.evolve(c, wrap_problem=problems.get((c.file, c.call.location))) for c in candidates]


def _join(prefix: str, rel: str) -> str:
    return f"{prefix}/{rel}" if prefix else rel


def initial_drafts(plan: InitPlan) -> list[Contract]:
    """One local draft per candidate, ids unique among themselves and existing contracts."""
    taken = set(plan.contracts.contracts)
    drafts = []
    for candidate in plan.candidates:
        draft = draft_contract(candidate.call, taken_ids=taken)
        taken.add(draft.id)
        drafts.append(draft)
    return drafts


def redraft(candidate: Candidate, *, current: Contract, taken: Iterable[str], variant: int) -> Contract:
    """The next local variant, keeping the id the user already sees."""
    return attrs.evolve(draft_contract(candidate.call, taken_ids=taken, variant=variant), id=current.id)


def remote_items(plan: InitPlan) -> list[tuple[str, LlmCall, str]]:
    """(ref, call, redacted context) for every candidate: what a remote would receive."""
    sources: dict[Path, str] = {}
    items = []
    for i, candidate in enumerate(plan.candidates):
        if candidate.file not in sources:
            sources[candidate.file] = candidate.file.read_text(encoding="utf-8")
        items.append((f"c{i}", candidate.call, call_context(sources[candidate.file], candidate.call)))
    return items


# -- showing ---------------------------------------------------------------


def describe(candidate: Candidate, draft: Contract, *, number: int, total: int) -> str:
    call = candidate.call
    rec = call.recommendation
    loc = call.location
    lines = [
        f"[{number}/{total}] {loc.path}:{loc.line}:{loc.column}  {call.function}  ({call.provider} {call.api})",
        "  Decision surface:",
        *(f"    {f.rule} {f.kind}: {f.detail} (line {f.line})" for f in call.findings),
    ]
    if not call.findings:
        lines.append("    (nothing found beyond the call itself)")
    rules = ", ".join(rec.rules) or "none"
    lines.append(f"  Recommended mode: {rec.mode} (rules {rules}; confidence {rec.confidence})")
    lines += [f"    - {reason}" for reason in rec.reasons]
    if candidate.wrap_problem:
        lines.append(f"  Note: apply will not wrap this call ({candidate.wrap_problem}); guard it by hand.")
    lines.append("  Draft contract:")
    lines += [f"    {line}" for line in contract_toml(draft).splitlines()]
    return "\n".join(lines)


def contract_toml(contract: Contract) -> str:
    """The contract's table exactly as it will be written to the file."""
    text = dump_contracts(ContractSet({contract.id: contract}))
    return text.split("\n", 2)[2]  # drop "version = 1" and the blank line


# -- editing -----------------------------------------------------------------

EDIT_HEADER = (
    "# Edit this draft contract, save and close the editor to continue.\n"
    "# The call's location (path, function, index, provider, api) is fixed.\n"
    f"# mode is one of: {', '.join(MODE_NAMES)}; sample_rate is only for sampled.\n"
)


def editable_text(draft: Contract) -> str:
    lines = contract_toml(draft).splitlines()
    fixed = ("[contracts.", "path =", "function =", "index =", "provider =", "api =", "rules =")
    body = [line for line in lines if not line.startswith(fixed)]
    return EDIT_HEADER + f"id = {toml_string(draft.id)}\n" + "\n".join(body) + "\n"


def parse_edited(draft: Contract, text: str) -> Contract:
    """The draft with the editor's values; ``ContractFileError`` lists every problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ContractFileError(f"the edited draft is not valid TOML: {exc}") from exc
    allowed = {"id", "mode", "policy", "question", "choices", "approve_choices", "sample_rate"}
    unknown = set(data) - allowed
    if unknown:
        raise ContractFileError(f"the edited draft has keys that cannot be edited: {', '.join(sorted(unknown))}")
    try:
        changes: dict[str, Any] = {k: data[k] for k in ("id", "mode", "policy", "question") if k in data}
        for key, value in changes.items():
            if not isinstance(value, str):
                raise TypeError(f"{key} must be a string")
        if "choices" in data:
            changes["choices"] = tuple(Choice(id=str(c["id"]), label=str(c["label"])) for c in data["choices"])
        if "approve_choices" in data:
            changes["approve_choices"] = tuple(str(a) for a in data["approve_choices"])
        changes["sample_rate"] = _rate(data.get("sample_rate"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ContractFileError(f"the edited draft is not usable: {exc}") from exc
    return checked(attrs.evolve(draft, **changes))


def parse_inline(
    draft: Contract, *, id: str, mode: str, policy: str, question: str, choices: str, approve: str, sample_rate: str
) -> Contract:
    """Values typed at the prompts: choices as ``id:Label, id:Label``, approve as ``id, id``."""
    parsed = []
    for item in filter(None, (part.strip() for part in choices.split(","))):
        choice_id, _, label = item.partition(":")
        parsed.append(Choice(id=choice_id.strip(), label=label.strip() or choice_id.strip()))
    try:
        rate = _rate(sample_rate.strip() or None) if mode == "sampled" else None
    except (TypeError, ValueError) as exc:
        raise ContractFileError(f"sample rate: {exc}") from exc
    return checked(
        attrs.evolve(
            draft,
            id=id.strip(),
            mode=mode.strip(),
            policy=policy.strip(),
            question=question.strip(),
            choices=tuple(parsed),
            approve_choices=tuple(a.strip() for a in approve.split(",") if a.strip()),
            sample_rate=rate,
        )
    )


def inline_choices(draft: Contract) -> str:
    return ", ".join(f"{c.id}:{c.label}" for c in draft.choices)


def approve_default(draft: Contract, choices: str) -> str:
    """The approving choices to offer after the choices were edited: the old ones that still
    exist, else the first new choice, so pressing Enter keeps the edit instead of voiding it."""
    ids = [item.partition(":")[0].strip() for item in choices.split(",") if item.strip()]
    kept = [a for a in draft.approve_choices if a in ids]
    if kept:
        return ", ".join(kept)
    if draft.approve_choices and ids:
        return ids[0]
    return "-"


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError("sample_rate must be a number")
    return float(value)


def checked(contract: Contract) -> Contract:
    problems = validate_contract(contract)
    if problems:
        raise ContractFileError("; ".join(problems))
    return contract


def id_conflict(contracts: ContractSet, draft: Contract) -> str | None:
    """A reason when another call's contract already uses the draft's id."""
    other = contracts.get(draft.id)
    if other is not None and other.key != draft.key:
        return f"id {draft.id!r} is already used by the contract for {other.function} in {other.path}"
    return None


def blocking_contract(contracts: ContractSet, draft: Contract, *, stale_ids: Iterable[str]) -> str | None:
    """Why accepting ``draft`` would overwrite or orphan a contract already in the file, if it would.

    Contracts are located by (path, function, index), so a call added before a
    contracted call (a wrapper call site, say) shifts its index: the old
    contract's location then names the new call. Replacing that contract would
    lose the user's reviewed text and the id its guard uses, so ``init`` never
    does; moving it is the user's call.
    """
    stale = set(stale_ids)
    for other in sorted(contracts.contracts.values(), key=lambda c: c.id):
        if other.key == draft.key:
            return (
                f"contract {other.id!r} ({other.provider} {other.api}) is at index {other.index} of "
                f"{other.function} in {other.path}, where the call is now {draft.provider} {draft.api}: "
                "a call added before its call shifted the indexes. It is kept as it is, not replaced. "
                f"Set its index in {CONTRACTS_FILENAME} to where its call is now "
                "(or delete it if its call is gone), then re-run init"
            )
        same_api = (other.path, other.function, other.provider, other.api) == (
            draft.path, draft.function, draft.provider, draft.api
        )  # fmt: skip
        if other.id in stale and same_api:
            return (
                f"contract {other.id!r} ({other.provider} {other.api}, index {other.index} of {other.function} "
                f"in {other.path}) locates no call any more and may be this call's, now at index {draft.index}. "
                f"Set its index to {draft.index} in {CONTRACTS_FILENAME} "
                "(or delete it if it belongs to no call), then re-run init"
            )
    return None
