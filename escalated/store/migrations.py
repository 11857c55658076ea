"""Migrations: numbered ``.sql`` files, one folder per dialect
(``store/sql/migrations/<dialect>/NNNN_name.sql``), applied in file-name
order and recorded under the file's name without ``.sql``.

Both dialects carry the same names in the same order (a test holds them
to it), and a migration that has shipped is never edited: add a file.
The numbers run from 0001 without a gap, so a file lost from a build
fails loudly here rather than leaving a database half migrated.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from importlib.resources.abc import Traversable

_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@functools.cache
def load(dialect: str) -> tuple[tuple[str, str], ...]:
    """(name, SQL) of every migration of the dialect, in order."""
    return read(resources.files("escalated.store").joinpath("sql", "migrations", dialect))


def read(folder: Traversable) -> tuple[tuple[str, str], ...]:
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
    for number, name in enumerate(names, start=1):
        match = _FILE.match(name)
        if match is None or int(match.group(1)) != number:
            raise ValueError(f"migration {folder.name}/{name}: expected {number:04d}_<name>.sql")
    return tuple((name.removesuffix(".sql"), folder.joinpath(name).read_text(encoding="utf-8")) for name in names)
