"""``escalated workspaces``: isolated tenants inside one database."""

from __future__ import annotations

import click

from escalated.commands.common import shared_group_options, converts_errors, db_option, run_admin


@click.group()
@shared_group_options
def workspaces(db_path, workspace) -> None:
    """Create and list workspaces (the workspace 'default' always exists)."""


@workspaces.command("create")
@click.argument("name")
@db_option
@converts_errors
def create(name, db_path) -> None:
    """Create workspace NAME."""
    ws = run_admin(db_path, lambda admin: admin.create_workspace(name=name))
    click.echo(ws.name)


@workspaces.command("list")
@db_option
@converts_errors
def list_(db_path) -> None:
    """List workspaces."""
    for ws in run_admin(db_path, lambda admin: admin.workspaces()):
        click.echo(ws.name)
