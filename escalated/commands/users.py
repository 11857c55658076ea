"""``escalated users``: reviewers and admins, with their tokens (ain_user_…)."""

from __future__ import annotations

import click

from escalated.commands.common import shared_group_options, converts_errors, db_option, transact, workspace_option
from escalated.domain import tokens
from escalated.domain.contacts import checked_contacts
from escalated.domain.scopes import ROLES
from escalated.settings import DEFAULT_PORT, PostgresUrl
from escalated.store import admin
from escalated.timeutil import now_ms, parse_duration_s
from escalated.core.websessions import DEFAULT_LINK_TTL_S, issue_login_link, login_url


@click.group()
@shared_group_options
def users(db_path, workspace) -> None:
    """Add reviewers, list them, rotate their tokens."""


@users.command("add")
@click.argument("name")
@db_option
@workspace_option
@click.option("--group", "-g", "groups", multiple=True, help="Group membership (repeatable); policies route to group:NAME.")
@click.option("--role", type=click.Choice(ROLES), default="reviewer", show_default=True, help="reviewer: read, acknowledge, decide, cancel. admin: all five scopes and key management.")
@click.option("--email", help="Address for email notifications with decision links (email:ADDR targets); unique per workspace, any case.")
@click.option("--slack-id", help="Slack member id (U…) whose button clicks decide as this user; unique per workspace.")
@converts_errors
def add(name, db_path, workspace, groups, role, email, slack_id) -> None:
    """Add user NAME and print only the new user token (shown once)."""
    email, slack_id = checked_contacts(email=email, slack_id=slack_id)
    secret = tokens.mint(tokens.USER_TOKEN_PREFIX)
    contacts = {"email": email, "slack_id": slack_id}
    if isinstance(db_path, PostgresUrl):
        from escalated.commands import onpostgres

        onpostgres.run_on(
            db_path,
            lambda store: onpostgres.add_user(
                store, workspace=workspace, name=name, role=role, groups=tuple(groups), token_hash=tokens.hash_token(secret),
                **contacts,
            ),
        )
        click.echo(secret)
        return

    def job(conn):
        ws = admin.workspace_by_name(conn, workspace)
        admin.insert_user(
            conn, ws.id, name=name, role=role, groups=tuple(groups), token_hash=tokens.hash_token(secret), **contacts
        )

    transact(db_path, job)
    click.echo(secret)


@users.command("list")
@db_option
@workspace_option
@converts_errors
def list_(db_path, workspace) -> None:
    """List users: name, role, groups, email, Slack id ('-' when none). Never a token."""
    infos = transact(db_path, lambda conn: admin.list_users(conn, admin.workspace_by_name(conn, workspace).id))
    for user in infos:
        click.echo(f"{user.name}\t{user.role}\t{','.join(user.groups) or '-'}\t{user.email or '-'}\t{user.slack_id or '-'}")


@users.command("token")
@click.argument("name")
@db_option
@workspace_option
@converts_errors
def token(name, db_path, workspace) -> None:
    """Rotate NAME's token: print a new one; the old one stops working at once."""
    secret = tokens.mint(tokens.USER_TOKEN_PREFIX)

    def job(conn):
        ws = admin.workspace_by_name(conn, workspace)
        admin.rotate_user_token(conn, ws.id, name=name, token_hash=tokens.hash_token(secret))

    transact(db_path, job)
    click.echo(secret)


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

    def job(conn):
        ws = admin.workspace_by_name(conn, workspace)
        return issue_login_link(conn, ws.id, name, ttl_s=ttl_s, at_ms=now_ms())

    click.echo(login_url(base_url, transact(db_path, job)))
