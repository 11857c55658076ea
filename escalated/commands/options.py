"""The options the data commands share: --db and --workspace.

Kept free of the store so ``escalated --help`` and the root group can use
them without importing SQLite code.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from escalated.core.settings import PostgresUrl, parse_db

DB_ENV = "ESCALATED_DB"
DEFAULT_WORKSPACE = "default"


def _inherited(ctx: click.Context, name: str):
    """The nearest value given on the command line for ``name``: this command's
    own, else its group's, else the root's. A user writes ``escalated --db X
    keys create`` as naturally as ``escalated keys create --db X``, so the
    shared options are accepted at every level and the most specific wins."""
    level: click.Context | None = ctx
    while level is not None:
        if level.params.get(name) is not None:
            return level.params[name]
        level = level.parent
    return None


def _resolve_db(ctx: click.Context, param: click.Parameter, value):
    if value is not None:
        return value
    found = _inherited(ctx.parent, "db_path") if ctx.parent else None
    if found is not None:
        return found
    env = os.environ.get(DB_ENV)
    return parse_db(env) if env else None


class DbLocation(click.ParamType):
    """A SQLite file path, or a ``postgresql://`` URL (see ``parse_db``)."""

    name = "PATH|URL"

    def convert(self, value, param, ctx):
        return value if isinstance(value, (Path, PostgresUrl)) else parse_db(value)


def _resolve_workspace(default: str | None):
    def callback(ctx: click.Context, param: click.Parameter, value):
        if value is not None:
            return value
        found = _inherited(ctx.parent, "workspace") if ctx.parent else None
        return found if found is not None else default

    return callback


def db_option(fn):
    # No envvar= here: a value from the environment must not beat a --db the
    # user gave to an enclosing group, so _resolve_db reads it last.
    return click.option(
        "--db",
        "db_path",
        type=DbLocation(),
        default=None,
        callback=_resolve_db,
        help=f"SQLite database file (created and migrated on first use), or a postgresql:// URL. Env {DB_ENV}; "
        "default $XDG_DATA_HOME/escalated/escalated.db. Accepted before or after the command name.",
    )(fn)


def workspace_option(fn):
    return click.option(
        "--workspace",
        "-w",
        default=None,
        callback=_resolve_workspace(DEFAULT_WORKSPACE),
        help=f"Workspace the command acts in (default: {DEFAULT_WORKSPACE}).",
    )(fn)


def workspace_filter_option(fn):
    """Like ``workspace_option`` for listings, where no workspace means all."""
    return click.option(
        "--workspace", "-w", default=None, callback=_resolve_workspace(None), help="Only this workspace (default: all)."
    )(fn)


def shared_group_options(fn):
    """The options a group passes down to its commands (see ``_inherited``)."""
    return db_option(workspace_option_for_groups(fn))


def workspace_option_for_groups(fn):
    return click.option(
        "--workspace", "-w", default=None, help="Workspace for the commands that act in one (default: default)."
    )(fn)
