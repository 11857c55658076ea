"""What the data commands share: the --db option and error conversion."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

import click

from escalated.errors import EscalatedError
from escalated.settings import default_db_path
from escalated.store.db import connect, run_in_transaction


def db_option(fn):
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="ESCALATED_DB",
        default=None,
        show_envvar=True,
        help="SQLite database file (created and migrated on first use). Default: $XDG_DATA_HOME/escalated/escalated.db",
    )(fn)


def workspace_option(fn):
    return click.option(
        "--workspace", "-w", default="default", show_default=True, help="Workspace the command acts in."
    )(fn)


def open_db(db_path: Path | None) -> sqlite3.Connection:
    return connect(db_path or default_db_path())


def transact(db_path: Path | None, fn, *args):
    conn = open_db(db_path)
    try:
        return run_in_transaction(conn, fn, *args)
    finally:
        conn.close()


def converts_errors(fn):
    """Our errors become ClickException (exit 1) with the message only."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except EscalatedError as exc:
            raise click.ClickException(exc.detail) from None
        except sqlite3.Error as exc:
            raise click.ClickException(f"database error: {exc}") from None

    return wrapper
