"""``escalated migrate``: bring a database's schema up to date, then exit.

``serve`` migrates on start too; this command lets a deploy migrate once,
before starting replicas.
"""

from __future__ import annotations

import click

from escalated.commands.common import converts_errors, db_option
from escalated.core import stores
from escalated.core.settings import PostgresUrl, default_db_path


def apply_migrations(target) -> list[str]:
    """The migration names applied now (none when already up to date)."""
    if isinstance(target, PostgresUrl):
        psycopg = stores.postgres_driver()  # ConfigError naming the extra
        try:
            return stores.migrate(target)
        except psycopg.Error as exc:  # libpq's messages name host and user, never the password
            raise click.ClickException(f"database error: {exc}") from None
    return stores.migrate(target)


@click.command()
@db_option
@converts_errors
def migrate(db_path) -> None:
    """Create or upgrade the database's tables (SQLite file or postgresql:// URL) and exit."""
    target = db_path or default_db_path()
    applied = apply_migrations(target)
    if applied:
        click.echo(f"Migrated {target}: applied {', '.join(applied)}")
    else:
        click.echo(f"{target} is up to date")
