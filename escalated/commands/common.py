"""What the data commands share: the --db option and error conversion."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

import click

from escalated.commands.options import (  # noqa: F401  (re-exported for the commands)
    db_option,
    shared_group_options,
    workspace_filter_option,
    workspace_option,
)
from escalated.commands.dbpath import DB_ERRORS, db_path_problem
from escalated.errors import ConfigError, EscalatedError
from escalated.settings import PostgresUrl, default_db_path
from escalated.store.db import connect, run_in_transaction


def open_db(db_path: Path | PostgresUrl | None) -> sqlite3.Connection:
    if isinstance(db_path, PostgresUrl):
        raise ConfigError("this command does not run on PostgreSQL yet; only `escalated migrate` does")
    path = db_path or default_db_path()
    try:
        return connect(path)
    except DB_ERRORS as exc:
        raise ConfigError(db_path_problem(path, exc)) from None


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
