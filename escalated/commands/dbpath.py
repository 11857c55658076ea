"""Saying why a database path cannot be used, naming the path.

SQLite only says "unable to open database file"; an operator needs to know
which file, and whether to fix a directory, a mount or a wrong --db.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path


def db_path_problem(path: Path, exc: BaseException) -> str:
    """One line: the path and the most likely reason ``exc`` was raised."""
    return f"cannot use database {path}: {_reason(path, exc)}"


def _reason(path: Path, exc: BaseException) -> str:
    if isinstance(exc, OSError):  # creating the parent directories or a file beside the database
        return _os_reason(path, exc)
    text = str(exc)
    if "file is not a database" in text:
        return "the file exists but is not an SQLite database (is --db pointing at the right file?)"
    if "locked" in text:
        return "another process holds its write lock (try again, or stop the other process)"
    return _access_reason(path) or f"SQLite: {text}"


def _os_reason(path: Path, exc: OSError) -> str:
    where = exc.filename or "its directory"
    if exc.errno in (errno.EEXIST, errno.ENOTDIR) and exc.filename:
        blocker = _existing_ancestor(Path(exc.filename))
        return f"{blocker} is a file, not a directory, so the database directory cannot be created there"
    if path.parent.is_dir():  # the directory exists: it is a file in it that could not be made
        return _access_reason(path) or f"{where}: {exc.strerror or exc}"
    if exc.errno == errno.EROFS:
        return f"cannot create directory {where}: the file system is read-only"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"cannot create directory {where}: permission denied"
    return f"cannot create directory {where}: {exc.strerror or exc}"


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _access_reason(path: Path) -> str | None:
    """Why SQLite could not open or create ``path``, or None if nothing is visibly wrong."""
    if path.is_dir():
        return "it is a directory; give the path of a file"
    parent = path.parent
    if _read_only_fs(parent):
        return f"{parent} is on a read-only file system"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"directory {parent} is not writable by this user (SQLite also creates -wal and -shm files beside it)"
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return "the file is not readable and writable by this user"
    if not path.exists():
        return f"SQLite cannot create a file in {parent} (not an ordinary writable directory?)"
    return None


def _read_only_fs(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


DB_ERRORS = (OSError, sqlite3.Error)
