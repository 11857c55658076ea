"""``escalated users``: reviewers and admins, with their tokens (ain_user_…)."""

from __future__ import annotations

import click

from escalated.commands.common import shared_group_options, converts_errors, db_option, run_admin, workspace_option
from escalated.domain.scopes import ROLES
from escalated.core.settings import DEFAULT_PORT
from escalated.timeutil import parse_duration_s
from escalated.core.weblinks import login_url
from escalated.core.websessions import DEFAULT_LINK_TTL_S


@click.group()
@shared_group_options
def users(db_path, workspace) -> None:
    """Add reviewers, list them, rotate their tokens."""


@users.command("add")
@click.argument("name")
@db_option
@workspace_option
@click.option("--group", "-g", "groups", multiple=True, help="Group membership (repeatable); policies route to group:NAME.")
@click.option("--role", type=click.Choice(ROLES), default="reviewer",
              show_default=True, help="reviewer: read, acknowledge, decide, cancel. admin: all five scopes and key management.")
@click.option("--email", help="Address for email notifications with decision links (email:ADDR targets); unique per workspace, any case.")
@click.option("--slack-id", help="Slack member id (U…) whose button clicks decide as this user; unique per workspace.")
@converts_errors
def add(name, db_path, workspace, groups, role, email, slack_id) -> None:
    """Add user NAME and print only the new user token (shown once)."""

    async def add_one(admin):
        operator = await admin.operator(workspace=workspace)
        return await admin.add_user(
            operator, name=name, role=role, groups=tuple(groups), email=email, slack_id=slack_id
        )

    click.echo(run_admin(db_path, add_one))


@users.command("list")
@db_option
@workspace_option
@converts_errors
def list_(db_path, workspace) -> None:
    """List users: name, role, groups, email, Slack id ('-' when none). Never a token."""

    async def listing(admin):
        return await admin.users(await admin.operator(workspace=workspace))

    infos = run_admin(db_path, listing)
    for user in infos:
        click.echo(f"{user.name}\t{user.role}\t{','.join(user.groups) or '-'}\t{user.email or '-'}\t{user.slack_id or '-'}")


@users.command("token")
@click.argument("name")
@db_option
@workspace_option
@converts_errors
def token(name, db_path, workspace) -> None:
    """Rotate NAME's token: print a new one; the old one stops working at once."""

    async def rotate(admin):
        return await admin.rotate_token(await admin.operator(workspace=workspace), name=name)

    click.echo(run_admin(db_path, rotate))


@users.command("login-link")
@click.argument("name")
@db_option
@workspace_option
@click.option("--ttl", default="15m", show_default=True, help="How long the link stays usable: 90s, 15m, 4h, 2d or PT15M.")
@click.option(
    "--url",
    "base_url",
    envvar="ESCALATED_URL",
    default=f"http://127.0.0.1:{DEFAULT_PORT}",
    show_default=True,
    help="The server's address as the user reaches it (env ESCALATED_URL).",
)
@converts_errors
def login_link(name, db_path, workspace, ttl, base_url) -> None:
    """Print a single-use web sign-in link for NAME (for people who should never handle a token).

    The link works once, until --ttl passes or NAME's token is rotated.
    """
    ttl_s = parse_duration_s(ttl) if ttl else DEFAULT_LINK_TTL_S

    async def link(admin):
        return await admin.login_link(await admin.operator(workspace=workspace), name=name, ttl_s=ttl_s)

    click.echo(login_url(base_url, run_admin(db_path, link)))
