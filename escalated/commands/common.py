"""What the data commands share: the --db option, running on the core, error conversion.

A data command opens the database named by --db (a SQLite file or a
``postgresql://`` URL: the same code for both), asks ``AdminService`` as
the operator, and closes it again.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import click

from escalated.commands.options import (  # noqa: F401  (re-exported for the commands)
    db_option,
    shared_group_options,
    workspace_filter_option,
    workspace_option,
)
from escalated.commands.dbpath import DB_ERRORS, db_path_problem
from escalated.errors import ConfigError, EscalatedError
from escalated.core.settings import PostgresUrl, Settings, default_db_path

T = TypeVar("T")


def database(db_path: Path | PostgresUrl | None) -> Path | PostgresUrl:
    return db_path or default_db_path()


def run_admin(db_path: Path | PostgresUrl | None, fn: Callable[..., Awaitable[T]]) -> T:
    """``await fn(admin)`` with an ``AdminService`` over the database, closed after."""
    from escalated.core.admin import AdminService
    from escalated.core.stores import open_store

    target = database(db_path)

    async def main() -> T:
        store = await _opened(target, open_store(Settings(db_path=target)))
        try:
            return await fn(AdminService(store))
        finally:
            await store.close()

    if not isinstance(target, PostgresUrl):
        return asyncio.run(main())
    from escalated.core.stores import postgres_driver

    psycopg = postgres_driver()
    try:
        return asyncio.run(main())
    except psycopg.Error as exc:  # libpq's messages name host and user, never the password
        raise ConfigError(f"database error: {exc}") from None


async def _opened(target: Path | PostgresUrl, opening: Awaitable[T]) -> T:
    """A SQLite file that cannot be opened is named with the likely reason (dbpath.py)."""
    if isinstance(target, PostgresUrl):
        return await opening
    try:
        return await opening
    except DB_ERRORS as exc:
        raise ConfigError(db_path_problem(target, exc)) from None


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
