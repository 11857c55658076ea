"""``escalated contracts init`` and ``escalated contracts apply``.

Thin click commands over ``initialise`` / ``apply``: the prompts, the
editor and the confirmation live here, the decisions there. Errors of ours
become ``ClickException`` once, here.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click

from escalated.guard.contracts import Contract, ContractFileError, save_contracts
from escalated.guard.modes import MODE_NAMES
from escalated.contracts.deep import with_deep_stack
from escalated.errors import EscalatedError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from escalated.guard.contracts import ContractSet
    from escalated.contracts.report.coverage import StaleContract
    from escalated.contracts.edit.apply import ChangeSet
    from escalated.contracts.edit.initialise import Candidate, InitPlan
    from escalated.contracts.calls import ScanResult

_ACTIONS = {"a": "accept", "e": "edit", "r": "regenerate", "s": "skip", "q": "quit"}


# -- init ----------------------------------------------------------------------


@click.command("init")
@click.argument("path", default=".", type=click.Path(exists=True, path_type=Path))
@click.option("--remote", metavar="URL", help="Draft with a remote analyser (sends redacted context, asks first).")
@click.option("--consent", is_flag=True, help="Agree to the remote upload without a prompt (non-interactive use).")
@click.option("--show-payload", is_flag=True, help="Print the exact JSON a remote would receive.")
@click.option("--accept-all", is_flag=True, help="Accept every draft without prompting (CI and scripts).")
@with_deep_stack
def init(path: Path, remote: str | None, consent: bool, show_payload: bool, accept_all: bool) -> None:
    """Draft a contract for each uncovered LLM call under PATH, one prompt each.

    For every call: accept, edit, regenerate or skip (the default); quit stops
    and keeps what was accepted. Accepted contracts are written to
    escalated.contracts.toml at the project root. Nothing leaves the machine
    unless --remote is given and you agree (or pass --consent).
    """
    from escalated.contracts.edit import initialise

    if consent and not remote:
        raise click.UsageError("--consent only applies with --remote URL")
    try:
        plan = initialise.plan_init(path)
    except EscalatedError as exc:
        raise click.ClickException(str(exc)) from exc
    for problem in plan.errors:
        click.echo(f"warning: {problem.path}: {problem.message} (not scanned)", err=True)
    if not plan.candidates:
        click.echo(f"Every LLM call already has a contract ({plan.total_calls} found).")
        if plan.awaiting_apply:
            pending = plan.awaiting_apply
            click.echo(f"{pending} of them are not wrapped in their guard yet: run `escalated contracts apply`.")
        return
    drafts = initialise.initial_drafts(plan)
    remote_on = False
    if remote or show_payload:
        drafts, remote_on = _remote_drafts(plan, drafts, url=remote, consent=consent, show_payload=show_payload)
    _Session(plan, drafts, remote=remote if remote_on else None, accept_all=accept_all).run()


def _remote_drafts(
    plan: InitPlan, drafts: list[Contract], *, url: str | None, consent: bool, show_payload: bool
) -> tuple[list[Contract], bool]:
    """The drafts (reworded by the remote when it was allowed to answer) and whether it is in use."""
    from escalated.contracts.edit import initialise, remote

    items = initialise.remote_items(plan)
    payload = remote.build_payload(items)
    if show_payload:
        click.echo("Payload (exactly what would be sent):")
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    if url is None:
        return drafts, False
    if not consent and not _ask_consent(url, count=len(items), shown=show_payload):
        click.echo("Nothing was sent; drafting locally.")
        return drafts, False
    try:
        answers = {d.ref: d for d in remote.send(url, payload, token=os.environ.get("ESCALATED_REMOTE_TOKEN"))}
    except remote.RemoteError as exc:
        click.echo(f"warning: {exc}; drafting locally.", err=True)
        return drafts, True
    merged = []
    for (ref, _call, _ctx), draft in zip(items, drafts, strict=True):
        new, problems = remote.merge(draft, answers[ref]) if ref in answers else (draft, [])
        if problems:
            click.echo(f"warning: remote draft for {draft.id} ignored: {'; '.join(problems)}", err=True)
        merged.append(new)
    return merged, True


def _ask_consent(url: str, *, count: int, shown: bool) -> bool:
    from escalated.contracts.edit.remote import shown_url

    what = "the payload above" if shown else f"redacted context of {count} call(s)"
    url = shown_url(url)
    click.echo(
        f"Remote drafting sends {what} to {url}: no comments, no docstrings, no string data, "
        "no secrets. Use --show-payload to see it first."
    )
    try:
        return click.confirm("Send it?", default=False)
    except click.Abort:  # no input (non-interactive): no consent
        click.echo()
        return False


@attrs.define
class _Session:
    plan: InitPlan
    drafts: list[Contract]
    remote: str | None = None
    accept_all: bool = False
    accepted: int = 0
    skipped: int = 0
    # Why calls were left without a contract because one already in the file was in the way.
    blocked: list[str] = attrs.field(factory=list)
    contracts: ContractSet = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.contracts = self.plan.contracts

    def run(self) -> None:
        total = len(self.plan.candidates)
        for number, (candidate, draft) in enumerate(zip(self.plan.candidates, self.drafts, strict=True), start=1):
            if not self._one(candidate, draft, number=number, total=total):
                self._summary(quit_at=number)
                return
        self._summary(quit_at=None)

    def _one(self, candidate: Candidate, draft: Contract, *, number: int, total: int) -> bool:
        """Prompt until the call is accepted or skipped (True), or the user quits (False)."""
        from escalated.contracts.edit import initialise

        variant, blocked = 0, None
        while True:
            click.echo()
            click.echo(initialise.describe(candidate, draft, number=number, total=total))
            action = "accept" if self.accept_all else _ask_action()
            if action == "accept":
                blocked = self._refusal(draft)
                if blocked is None:
                    self._accept(draft)
                    return True
                click.echo(f"Cannot accept: {blocked}.")
                if self.accept_all:  # nobody to edit or move anything: skip, and say so
                    return self._skip(blocked)
            elif action == "edit":
                draft = _edit(draft)
            elif action == "regenerate":
                variant += 1
                draft = self._regenerate(candidate, draft, self.contracts, variant)
            elif action == "skip":
                return self._skip(blocked)
            else:
                self._left_blocked(blocked)
                return False

    def _refusal(self, draft: Contract) -> str | None:
        """Why ``draft`` cannot be accepted: a contract already in the file is in its way."""
        from escalated.contracts.edit import initialise

        blocking = initialise.blocking_contract(self.contracts, draft, stale_ids=self.plan.stale_ids)
        if blocking is not None:
            return blocking
        conflict = initialise.id_conflict(self.contracts, draft)
        return None if conflict is None else f"{conflict}. Edit the id first"

    def _skip(self, blocked: str | None) -> bool:
        self.skipped += 1
        self._left_blocked(blocked)
        return True

    def _left_blocked(self, blocked: str | None) -> None:
        # The call leaves without a contract because an existing one was in its way: say so at the end.
        if blocked is not None:
            self.blocked.append(blocked)

    def _accept(self, draft: Contract) -> None:
        # Written at once, so a later quit or crash keeps every accepted draft.
        self.contracts = self.contracts.with_contract(draft)
        written = save_contracts(self.plan.project_root, self.contracts)
        self.accepted += 1
        click.echo(f"Accepted {draft.id} -> {written.name}")

    def _regenerate(self, candidate: Candidate, draft: Contract, contracts: ContractSet, variant: int) -> Contract:
        from escalated.contracts.edit import initialise, remote

        taken = set(contracts.contracts) | {d.id for d in self.drafts}
        local = initialise.redraft(candidate, current=draft, taken=taken, variant=variant)
        if self.remote is None:
            return local
        item = ("c0", candidate.call, remote.call_context(candidate.file.read_text(encoding="utf-8"), candidate.call))
        try:
            payload = remote.build_payload([item], attempt=variant)
            answers = remote.send(self.remote, payload, token=os.environ.get("ESCALATED_REMOTE_TOKEN"))
        except remote.RemoteError as exc:
            click.echo(f"warning: {exc}; regenerated locally.", err=True)
            return local
        merged, problems = remote.merge(local, answers[0]) if answers else (local, [])
        if problems:
            click.echo(f"warning: remote draft ignored: {'; '.join(problems)}", err=True)
        return merged

    def _summary(self, *, quit_at: int | None) -> None:
        click.echo()
        if quit_at is not None:
            click.echo(f"Stopped at call {quit_at} of {len(self.plan.candidates)}.")
        click.echo(f"{self.accepted} accepted, {self.skipped} skipped.")
        if self.accepted:
            click.echo("Next: escalated contracts apply  (wraps the accepted calls with their guards)")
        if self.blocked:
            # Exit 1 like scan's stale contract: the file needs a person before every call is covered.
            click.echo(f"error: {len(self.blocked)} call(s) left without a contract; nothing was overwritten:", err=True)
            for reason in self.blocked:
                click.echo(f"  - {reason}.", err=True)
            sys.exit(1)


def _ask_action() -> str:
    while True:
        try:
            answer = click.prompt(
                "Accept, edit, regenerate, skip or quit? [a/e/r/s/q]", default="s", show_default=True
            )
        except click.Abort:  # end of input: quit, keeping what was accepted
            click.echo()
            return "quit"
        action = _ACTIONS.get(answer.strip().lower()[:1])
        if action is not None and action.startswith(answer.strip().lower()):
            return action
        click.echo("Please answer a, e, r, s or q.")


def _edit(draft: Contract) -> Contract:
    """$VISUAL/$EDITOR when set, otherwise prompts; an invalid edit keeps the previous draft."""
    from escalated.contracts.edit import initialise

    try:
        if os.environ.get("VISUAL") or os.environ.get("EDITOR"):
            text = click.edit(initialise.editable_text(draft), extension=".toml", require_save=False)
            return draft if text is None else initialise.parse_edited(draft, text)
        return _edit_inline(draft)
    except ContractFileError as exc:
        click.echo(f"Edit not used: {exc.detail}")
        return draft


def _edit_inline(draft: Contract) -> Contract:
    from escalated.contracts.edit import initialise
    from escalated.contracts.edit.drafts import choice_set

    mode = click.prompt("Mode", default=draft.mode, type=click.Choice(MODE_NAMES))
    if (mode == "required") != (draft.mode == "required"):
        # Deciding before use and reviewing after want different answers.
        choices, approve = choice_set(mode)
        draft = attrs.evolve(draft, choices=choices, approve_choices=approve)
    values = {
        "id": click.prompt("Contract id", default=draft.id),
        "mode": mode,
        "policy": click.prompt("Policy key", default=draft.policy),
        "question": click.prompt("Question", default=draft.question),
        "choices": click.prompt("Choices (id:Label, …)", default=initialise.inline_choices(draft)),
        "sample_rate": "",
    }
    # Offer what the edited choices allow, not the old ids (Enter must not void the edit).
    values["approve"] = click.prompt("Approving choices (id, …)", default=initialise.approve_default(draft, values["choices"]))
    if values["approve"] == "-":
        values["approve"] = ""
    if mode == "sampled":
        values["sample_rate"] = click.prompt("Sample rate (0-1]", default=str(draft.sample_rate or 0.1))
    return initialise.parse_inline(draft, **values)


# -- apply ---------------------------------------------------------------------


@click.command("apply")
@click.argument("path", default=".", type=click.Path(exists=True, path_type=Path))
@click.option("--yes", is_flag=True, help="Write without asking.")
@click.option("--diff", "diff_only", is_flag=True, help="Show the diff and write nothing.")
@with_deep_stack
def apply(path: Path, yes: bool, diff_only: bool) -> None:
    """Wrap each contracted LLM call under PATH with its guard.

    The whole change set is built and validated first (every changed file
    parses and compiles, and a second apply would change nothing), the diff
    is shown, and after one confirmation all files are written, or none.
    """
    from escalated.contracts.report.coverage import check, project_contracts
    from escalated.contracts.edit.apply import build_change_set, write_change_set
    from escalated.contracts.scan.config import load_options
    from escalated.contracts.scan.discovery import ScanContext, scan_source, scan_tree

    base = path if path.is_dir() else path.parent
    try:
        contracts, prefix, label = project_contracts(path)
        if not len(contracts):
            click.echo("No contracts yet: run `escalated contracts init` first. Nothing to apply.")
            return
        result = scan_tree(path, options=load_options(path))
        # Re-scans see the project as this scan did (wrappers and clients of other modules).
        context = result.context
        assert context is None or isinstance(context, ScanContext)  # what scan_tree puts there
        rescan = functools.partial(scan_source, context=context)
        change_set = build_change_set(base, calls=result.calls, contracts=contracts, prefix=prefix, scan_source=rescan)
    except EscalatedError as exc:
        raise click.ClickException(str(exc)) from exc
    single = path.name if path.is_file() else None
    _warn(result, change_set, stale=check(result, contracts, prefix=prefix, single_file=single).stale)
    if not change_set.changes:
        click.echo(f"Nothing to apply: {change_set.already_guarded} contracted call(s) already guarded.")
        return
    click.echo(change_set.diff(), nl=False)
    files = len(change_set.changes)
    tools = f" and {change_set.tools_count} tool(s) guarded at the tool" if change_set.tools_count else ""
    summary = f"{change_set.wrapped_count} call(s){tools} in {files} file(s)"
    if diff_only:
        click.echo(f"{summary} would be wrapped (--diff: nothing written).")
        return
    if not yes and not _confirm(f"Write {summary}?"):
        click.echo("Nothing was written.")
        raise SystemExit(1)
    try:
        write_change_set(base, change_set)
    except EscalatedError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"Wrapped {summary}. Contracts: {label}.")
    _name_policies(change_set, contracts)


def _warn(result: ScanResult, change_set: ChangeSet, *, stale: Iterable[StaleContract]) -> None:
    """Everything apply leaves alone, and why, on stderr."""
    for problem in result.errors:
        click.echo(f"warning: {problem.path}: {problem.message} (left as it is)", err=True)
    for contract in stale:
        where = f"{contract.function} in {contract.path}"
        click.echo(f"warning: contract {contract.id} locates no call ({where})", err=True)
    for skip in change_set.skipped:
        loc = skip.location
        click.echo(f"skipped {loc.path}:{loc.line}:{loc.column} ({skip.contract_id}): {skip.reason}", err=True)


def _name_policies(change_set: ChangeSet, contracts: ContractSet) -> None:
    """The policies the new guards file under: a guard fails closed on a policy the server lacks."""
    wrapped_ids = {t.contract_id for c in change_set.changes for t in c.wrapped}
    wrapped_ids |= {t.contract_id for c in change_set.changes for t in c.tools_guarded}
    filing = [contracts.contracts[i] for i in wrapped_ids if contracts.contracts[i].mode != "autonomous"]
    policies = sorted({c.policy for c in filing})
    if policies:
        click.echo("The guards file escalations under these policies; each must exist on the server")
        click.echo("(escalated policy set KEY --reviewer NAME): " + ", ".join(policies))


def _confirm(question: str) -> bool:
    try:
        return click.confirm(question, default=False)
    except click.Abort:
        click.echo()
        return False
