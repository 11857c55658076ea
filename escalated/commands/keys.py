"""``escalated keys``: API keys. Only ``create`` prints a secret, and only that."""

from __future__ import annotations

import click

from escalated.commands.common import shared_group_options, workspace_filter_option, converts_errors, db_option, run_admin, workspace_option
from escalated.domain.scopes import ALL_SCOPES
from escalated.timeutil import format_opt, now_ms, parse_duration_s


@click.group()
@shared_group_options
def keys(db_path, workspace) -> None:
    """Create, list and revoke API keys (ain_live_…) for agents."""


@keys.command("create")
@db_option
@workspace_option
@click.option("--name", "-n", help="A label shown in lists and as answeredBy (key:NAME).")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(ALL_SCOPES),
    help="Grant only these scopes (repeatable). Default: all five escalation scopes.",
)
@click.option("--expires-in", help="Expire after a duration such as 30d or PT12H.")
@converts_errors
def create(db_path, workspace, name, scopes, expires_in) -> None:
    """Issue an API key and print it (only the key, so KEY=$(escalated keys create) works).

    The key is shown this once; only its hash is stored.
    """
    expires_ms = now_ms() + int(parse_duration_s(expires_in) * 1000) if expires_in else None

    async def issue(admin):
        operator = await admin.operator(workspace=workspace)
        secret, _ = await admin.issue_key(operator, name=name, scopes=frozenset(scopes or ALL_SCOPES), expires_ms=expires_ms)
        return secret

    click.echo(run_admin(db_path, issue))


@keys.command("list")
@db_option
@workspace_filter_option
@converts_errors
def list_(db_path, workspace) -> None:
    """List API keys: id, workspace, name, scopes, state. Never the secret."""

    async def listing(admin):
        names = {w.id: w.name for w in await admin.workspaces()}
        if workspace is None:
            return names, await admin.all_keys()
        return names, await admin.list_keys(await admin.operator(workspace=workspace))

    ws_names, infos = run_admin(db_path, listing)
    for info in infos:
        state = "revoked" if info.revoked_ms else ("expired" if info.expires_ms and info.expires_ms <= now_ms() else "active")
        expires = f" expires={format_opt(info.expires_ms)}" if info.expires_ms else ""
        click.echo(
            f"{info.id}\t{ws_names.get(info.workspace_id, '?')}\t{info.name or '-'}\t{state}\t"
            f"{','.join(sorted(info.scopes))}{expires}"
        )


@keys.command("revoke")
@db_option
@click.argument("key_id")
@converts_errors
def revoke(db_path, key_id) -> None:
    """Revoke the key KEY_ID (from `escalated keys list`). Takes effect at once."""
    run_admin(db_path, lambda admin: admin.revoke_any_key(key_id=key_id))
    click.echo(f"revoked {key_id}", err=True)
