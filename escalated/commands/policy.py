"""``escalated policy``: routing, notifications, SLA and default choice per key.

Changes take effect for escalations created afterwards, without a restart.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from escalated.commands.common import shared_group_options, converts_errors, db_option, run_admin, workspace_option
from escalated.domain.masking import mask_targets
from escalated.domain.models import Policy, ReviewRules
from escalated.domain.review import MAX_QUORUM, build_rules, format_level, parse_level
from escalated.commands.routing import refusal, warnings
from escalated.core.admin import PoliciesSaved, UnknownReviewers
from escalated.domain.policies import build_policy, parse_policy_file, policy_from_file_entry
from escalated.errors import ConfigError, NotFound
from escalated.timeutil import format_duration_s


def policy_json(policy: Policy) -> dict:
    """As ``policy list --json`` and ``policy show`` print it: webhook and
    Slack URLs masked (a policy file keeps them as written)."""
    return {
        "key": policy.key,
        "reviewers": list(policy.reviewers),
        "notify": mask_targets(policy.notify),
        "sla": format_duration_s(policy.sla_s) if policy.sla_s is not None else None,
        "defaultChoice": policy.default_choice,
        "cancelCallback": policy.cancel_callback,
        **review_json(policy.review),
    }


def review_json(rules: ReviewRules) -> dict:
    """CONTRACT §15's settings, named as in the policy file (camelCase, as the other keys)."""
    return {
        "remindEvery": format_duration_s(rules.remind_every_s) if rules.remind_every_s is not None else None,
        "levels": [
            {"after": format_duration_s(lv.after_s), "reviewers": list(lv.reviewers), "notify": mask_targets(lv.notify)}
            for lv in rules.levels
        ],
        "quorum": rules.quorum,
        "quorumChoices": list(rules.quorum_choices),
    }


def review_text(rules: ReviewRules) -> str:
    """The §15 settings in ``policy list``'s columns (empty when none)."""
    parts = [f"remind_every={format_duration_s(rules.remind_every_s)}"] if rules.remind_every_s is not None else []
    parts += [f"level={format_level(lv, masked=True)}" for lv in rules.levels]
    if rules.quorum > 1:
        parts.append(f"quorum={rules.quorum}:{','.join(rules.quorum_choices)}")
    return "".join(f"\t{p}" for p in parts)


def warn(warnings: list[str]) -> None:
    """On stderr, so stdout stays the documented output."""
    for line in warnings:
        click.echo(line, err=True)


async def save_policies(admin, operator, policies, *, allow: bool, prune: bool = False) -> PoliciesSaved:
    """Save them all or none; a reviewer matching no user is refused in the CLI's words unless ``allow``."""
    try:
        return await admin.set_policies(operator, policies=policies, allow_unknown_reviewers=allow, prune=prune)
    except UnknownReviewers as exc:
        raise ConfigError(refusal(exc)) from None


@click.group()
@shared_group_options
def policy(db_path, workspace) -> None:
    """Create, apply (from TOML), list, show and delete policies."""


@policy.command("set")
@click.argument("key")
@db_option
@workspace_option
@click.option("--sla", help="Time until the default choice applies: 90s, 15m, 4h, 2d or PT15M.")
@click.option("--default-choice", help="Choice id applied when the SLA elapses (required with --sla).")
@click.option("--reviewer", "reviewers", multiple=True, help="User NAME or group:NAME (repeatable). None: every user.")
@click.option("--notify", "notify", multiple=True, help="webhook:URL, slack:WEBHOOK_URL, email:ADDRESS or desktop (repeatable).")
@click.option(
    "--cancel-callback",
    is_flag=True,
    help="Cancelling sends the agent a signed escalation.cancelled callback (default: no callback on cancel).",
)
@click.option(
    "--allow-unknown-reviewers",
    "allow_unknown",
    is_flag=True,
    help="Save even if a reviewer matches no user yet (otherwise refused: its escalations would reach no one).",
)
@click.option("--remind-every", help="Notify again at this interval while an escalation is open (not acknowledged): 10m.")
@click.option(
    "--level",
    "levels",
    multiple=True,
    help="AFTER:REVIEWER[,REVIEWER...][|NOTIFY,...]: still open AFTER creation, these reviewers join and are "
    "notified (repeatable, in order), e.g. 15m:bob,group:leads.",
)
@click.option("--quorum", type=click.IntRange(1, MAX_QUORUM), help="Distinct users who must choose a quorum choice.")
@click.option("--quorum-choice", "quorum_choices", multiple=True, help="A choice id the quorum applies to (repeatable).")
@converts_errors
def set_(
    key, db_path, workspace, sla, default_choice, reviewers, notify, cancel_callback, allow_unknown,
    remind_every, levels, quorum, quorum_choices,
) -> None:  # fmt: skip
    """Create or replace the policy KEY (dotted lower-case words, e.g. refunds.large)."""

    def build(workspace_id: str):
        review = build_rules(
            key,
            remind_every=remind_every,
            levels=tuple(parse_level(text) for text in levels),
            quorum=quorum,
            quorum_choices=quorum_choices,
        )
        return build_policy(
            workspace_id,
            key,
            reviewers=reviewers,
            notify=notify,
            sla=sla,
            default_choice=default_choice,
            cancel_callback=cancel_callback,
            review=review,
        )

    async def save(admin):
        operator = await admin.operator(workspace=workspace)
        return await save_policies(admin, operator, [build(operator.workspace_id)], allow=allow_unknown)

    warn(warnings(run_admin(db_path, save).unroutable, workspace=workspace))
    click.echo(f"policy {key} saved", err=True)


@policy.command("apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@db_option
@click.option("--prune", is_flag=True, help="Also delete the workspace's policies that the file does not name.")
@click.option(
    "--allow-unknown-reviewers",
    "allow_unknown",
    is_flag=True,
    help="Save even if a reviewer matches no user yet (otherwise refused: its escalations would reach no one).",
)
@converts_errors
def apply(file, db_path, prune, allow_unknown) -> None:
    """Apply a TOML policy file: all of it, or nothing on any error.

    \b
    [workspace]            # optional, default "default"
    name = "default"
    [policies."refunds.large"]
    reviewers = ["alice", "group:finance"]
    notify = ["webhook:http://127.0.0.1:9100/hook", "email:ops@example.com", "desktop"]
    sla = "15m"
    default_choice = "deny"
    cancel_callback = true   # optional: cancelling sends escalation.cancelled
    remind_every = "10m"     # optional: notify again while open
    levels = [{after = "15m", reviewers = ["bob", "group:leads"], notify = ["desktop"]}]
    quorum = 2               # optional, with quorum_choices
    quorum_choices = ["approve"]
    """
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:  # TOML is UTF-8 by definition
        raise ConfigError(f"{file}: not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    parsed = parse_policy_file(text, source=str(file))

    async def save(admin):
        operator = await admin.operator(workspace=parsed.workspace)
        wanted = [policy_from_file_entry(operator.workspace_id, key, settings) for key, settings in parsed.policies]
        return await save_policies(admin, operator, wanted, allow=allow_unknown, prune=prune)

    saved = run_admin(db_path, save)
    wanted, pruned = saved.saved, saved.pruned
    warn(warnings(saved.unroutable, workspace=parsed.workspace))
    click.echo(f"applied {len(wanted)} polic{'y' if len(wanted) == 1 else 'ies'}", err=True)
    for key in pruned:
        click.echo(f"pruned {key}", err=True)


@policy.command("list")
@db_option
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@converts_errors
def list_(db_path, workspace, as_json) -> None:
    """List the workspace's policies."""

    async def listing(admin):
        operator = await admin.operator(workspace=workspace)
        return await admin.policies(operator), await admin.unroutable(operator)

    policies, unroutable = run_admin(db_path, listing)
    warn(warnings(unroutable, workspace=workspace))
    if as_json:
        click.echo(json.dumps([policy_json(p) for p in policies], indent=2))
        return
    for p in policies:
        sla = f"sla={format_duration_s(p.sla_s)} default={p.default_choice}" if p.sla_s is not None else "no sla"
        cancel = "\tcancel_callback" if p.cancel_callback else ""
        click.echo(
            f"{p.key}\t{sla}\treviewers={','.join(p.reviewers) or '*'}\tnotify={','.join(mask_targets(p.notify)) or '-'}{cancel}"
            + review_text(p.review)
        )


@policy.command("show")
@click.argument("key")
@db_option
@workspace_option
@converts_errors
def show(key, db_path, workspace) -> None:
    """Show one policy as JSON."""

    async def showing(admin):
        operator = await admin.operator(workspace=workspace)
        found = await admin.policy(operator, key=key)
        if found is None:
            raise ConfigError(f"no policy {key!r} in workspace {workspace!r}")
        return found, [u for u in await admin.unroutable(operator) if u.policy.key == key]

    found, unroutable = run_admin(db_path, showing)
    warn(warnings(unroutable, workspace=workspace))
    click.echo(json.dumps(policy_json(found), indent=2))


@policy.command("delete")
@click.argument("key")
@db_option
@workspace_option
@converts_errors
def delete(key, db_path, workspace) -> None:
    """Delete a policy. Existing escalations keep the routing and SLA they were created with."""

    async def delete_one(admin):
        try:
            await admin.delete_policy(await admin.operator(workspace=workspace), key=key)
        except NotFound:
            raise ConfigError(f"no policy {key!r} in workspace {workspace!r}") from None

    run_admin(db_path, delete_one)
    click.echo(f"deleted {key}", err=True)
