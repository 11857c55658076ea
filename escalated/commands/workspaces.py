"""``escalated workspaces``: isolated tenants inside one database."""

from __future__ import annotations

import click

from escalated.commands.common import shared_group_options, converts_errors, db_option, transact
from escalated.store import admin


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
    ws = transact(db_path, lambda conn: admin.create_workspace(conn, name))
    click.echo(ws.name)


@workspaces.command("list")
@db_option
@converts_errors
def list_(db_path) -> None:
    """List workspaces."""
    for ws in transact(db_path, admin.list_workspaces):
        click.echo(ws.name)
