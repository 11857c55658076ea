"""``escalated policy``: routing, notifications, SLA and default choice per key.

Changes take effect for escalations created afterwards, without a restart.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from escalated.commands.common import shared_group_options, converts_errors, db_option, transact, workspace_option
from escalated.domain.models import Policy
from escalated.commands.routing import check_reviewers, unroutable_policies, unroutable_warning
from escalated.domain.policies import build_policy, parse_policy_file, policy_from_file_entry, unknown_reviewers
from escalated.errors import ConfigError
from escalated.settings import PostgresUrl
from escalated.store import admin
from escalated.timeutil import format_duration_s


def policy_json(policy: Policy) -> dict:
    return {
        "key": policy.key,
        "reviewers": list(policy.reviewers),
        "notify": list(policy.notify),
        "sla": format_duration_s(policy.sla_s) if policy.sla_s is not None else None,
        "defaultChoice": policy.default_choice,
        "cancelCallback": policy.cancel_callback,
    }


def warn(warnings: list[str]) -> None:
    """On stderr, so stdout stays the documented output."""
    for line in warnings:
        click.echo(line, err=True)


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
@converts_errors
def set_(key, db_path, workspace, sla, default_choice, reviewers, notify, cancel_callback, allow_unknown) -> None:
    """Create or replace the policy KEY (dotted lower-case words, e.g. refunds.large)."""

    def build(workspace_id: str):
        return build_policy(
            workspace_id,
            key,
            reviewers=reviewers,
            notify=notify,
            sla=sla,
            default_choice=default_choice,
            cancel_callback=cancel_callback,
        )

    if isinstance(db_path, PostgresUrl):
        from escalated.commands import onpostgres

        warn(onpostgres.run_on(
            db_path, lambda store: onpostgres.set_policy(store, workspace=workspace, build=build, allow_unknown=allow_unknown)
        ))  # fmt: skip
        click.echo(f"policy {key} saved", err=True)
        return

    def job(conn):
        ws = admin.workspace_by_name(conn, workspace)
        built = build(ws.id)
        warnings = check_reviewers(conn, [built], allow=allow_unknown)
        admin.upsert_policy(conn, built)
        return warnings

    warn(transact(db_path, job))
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
    """
    parsed = parse_policy_file(file.read_text(encoding="utf-8"), source=str(file))

    def job(conn):
        ws = admin.workspace_by_name(conn, parsed.workspace)
        wanted = [policy_from_file_entry(ws.id, key, settings) for key, settings in parsed.policies]
        warnings = check_reviewers(conn, wanted, allow=allow_unknown)
        for p in wanted:
            admin.upsert_policy(conn, p)
        pruned = []
        if prune:
            keep = {p.key for p in wanted}
            for existing in admin.list_policies(conn, ws.id):
                if existing.key not in keep:
                    admin.delete_policy(conn, ws.id, existing.key)
                    pruned.append(existing.key)
        return wanted, pruned, warnings

    wanted, pruned, warnings = transact(db_path, job)
    warn(warnings)
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
    def job(conn):
        ws = admin.workspace_by_name(conn, workspace)
        return admin.list_policies(conn, ws.id), unroutable_policies(conn, [ws])

    policies, warnings = transact(db_path, job)
    warn(warnings)
    if as_json:
        click.echo(json.dumps([policy_json(p) for p in policies], indent=2))
        return
    for p in policies:
        sla = f"sla={format_duration_s(p.sla_s)} default={p.default_choice}" if p.sla_s is not None else "no sla"
        cancel = "\tcancel_callback" if p.cancel_callback else ""
        click.echo(f"{p.key}\t{sla}\treviewers={','.join(p.reviewers) or '*'}\tnotify={','.join(p.notify) or '-'}{cancel}")


@policy.command("show")
@click.argument("key")
@db_option
@workspace_option
@converts_errors
def show(key, db_path, workspace) -> None:
    """Show one policy as JSON."""

    def job(conn):
        ws = admin.workspace_by_name(conn, workspace)
        found = admin.get_policy(conn, ws.id, key)
        if found is None:
            raise ConfigError(f"no policy {key!r} in workspace {workspace!r}")
        unknown = unknown_reviewers(found.reviewers, admin.list_users(conn, ws.id))
        return found, [unroutable_warning(found, unknown, workspace=ws.name)] if unknown else []

    found, warnings = transact(db_path, job)
    warn(warnings)
    click.echo(json.dumps(policy_json(found), indent=2))


@policy.command("delete")
@click.argument("key")
@db_option
@workspace_option
@converts_errors
def delete(key, db_path, workspace) -> None:
    """Delete a policy. Existing escalations keep the routing and SLA they were created with."""

    def job(conn):
        if not admin.delete_policy(conn, admin.workspace_by_name(conn, workspace).id, key):
            raise ConfigError(f"no policy {key!r} in workspace {workspace!r}")

    transact(db_path, job)
    click.echo(f"deleted {key}", err=True)
