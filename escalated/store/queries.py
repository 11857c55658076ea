"""Named SQL: one file per dialect (``store/sql/<dialect>.sql``), read once.

A block starts with ``-- name: NAME`` (a whole statement) or ``-- part:
NAME`` (a clause or column list); ``{NAME}`` inside a block is replaced by
the text of an earlier block, so the shared column lists are written once.
The store is the only reader of these; tests/unit/test_queries.py checks
that every block is used and that every statement parses.

Parameters are named, ``:name``, written once for both dialects: SQLite
reads that style itself; for PostgreSQL (psycopg) the loader rewrites each
to ``%(name)s``. The statements run with a dict of values (extra keys are
ignored by both drivers).
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any
from importlib import resources

_HEADER = re.compile(r"^-- (name|part): ([a-z_]+)\s*$")
_REFERENCE = re.compile(r"\{([a-z_]+)\}")
# ``:name``, but not PostgreSQL's ``::type`` cast nor a digit (``'10:30'``).
_NAMED = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")
# How each dialect's driver spells a named parameter.
_PLACEHOLDER = {"sqlite": r":\1", "postgres": r"%(\1)s"}


@functools.cache
def load(dialect: str) -> dict[str, str]:
    """Every block of the dialect's file, by name, references expanded."""
    text = resources.files("escalated.store").joinpath("sql", f"{dialect}.sql").read_text(encoding="utf-8")
    return {name: named(block, dialect) for name, block in parse(text).items()}


def named(sql: str, dialect: str) -> str:
    """``sql`` with its ``:name`` parameters spelled as the dialect's driver reads them."""
    return _NAMED.sub(_PLACEHOLDER[dialect], sql)


def parameter_names(sql: str) -> list[str]:
    """A statement's ``:name`` parameters, in the order they appear."""
    return _NAMED.findall(sql)


def positional(sql: str) -> tuple[str, Callable[[Mapping[str, Any]], tuple[Any, ...]]]:
    """A SQLite statement's ``:name`` parameters as ``?``, and the function
    that takes their values out of a dict in that order: for the hot create,
    where SQLite's binding by name (a new string per parameter) costs more
    than picking the values out once."""
    names = _NAMED.findall(sql)
    pick = operator.itemgetter(*names)
    return _NAMED.sub("?", sql), (pick if len(names) > 1 else lambda params: (pick(params),))


def parse(text: str) -> dict[str, str]:
    blocks: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    for line in [*text.splitlines(), "-- name: _end"]:
        header = _HEADER.match(line)
        if header is None:
            if name is not None and not line.startswith("--"):
                lines.append(line)
            continue
        if name is not None:
            blocks[name] = _expand("\n".join(lines).strip("\n"), blocks)
        name, lines = header.group(2), []
        if name in blocks:
            raise ValueError(f"the SQL block {name!r} is defined twice")
    return blocks


def _expand(block: str, blocks: dict[str, str]) -> str:
    # A part that starts with a space is a clause to append: keep its space.
    return _REFERENCE.sub(lambda m: blocks[m.group(1)].strip(), block).rstrip()
