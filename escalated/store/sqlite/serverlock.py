"""One ``serve`` per SQLite database: OS locks on the database's file and on
a file beside it.

Two servers on one file would each run an SLA clock and a sender (callbacks
sent twice, ``/wait`` on one missing decisions made on the other). Two locks,
both ``flock``, which the kernel releases when the holder dies, however it
dies, so a crashed server (kill -9) never blocks the next start and there is
no stale-pid guessing:

- on the database file itself: a lock belongs to the file (its device and
  inode), not to a name, so a symlink or a hard link to the database is the
  same database (with a hard link SQLite keeps a separate WAL per name, so
  two servers would not even see each other's writes). On Linux ``flock``
  and the POSIX (``fcntl``) locks SQLite takes are independent, so holding
  it costs SQLite nothing; elsewhere (BSD, macOS) the two kinds conflict, so
  there only the lock file below is taken.
- on ``<real path>.serve.lock``: it records the holder's pid and listening
  address so the refusal can name them. Beside the real path (symlinks
  resolved), so a server started through a symlink finds it too.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

from escalated.errors import EscalatedError

# See the module docstring: flock on the database itself only where it never
# conflicts with SQLite's own locks.
LOCK_THE_FILE_ITSELF = sys.platform.startswith("linux")


class AlreadyServing(EscalatedError):
    """Another live ``serve`` holds this database."""

    code, title = "already_serving", "Database already served"


def lock_path(db_path: Path | str) -> Path:
    return Path(f"{os.path.realpath(db_path)}.serve.lock")


class ServerLock:
    """Held from start-up to exit; ``announce`` records where it listens."""

    def __init__(self, db_path: Path | str) -> None:
        self.db_path = Path(db_path)
        self.path = lock_path(db_path)
        self._fd: int | None = None
        self._db_fd: int | None = None

    def acquire(self) -> ServerLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if not _try_flock(fd):
            holder = _read(fd)
            os.close(fd)
            raise AlreadyServing(
                f"another escalated serve (pid {holder.get('pid', '?')}, listening on "
                f"{holder.get('address', 'an address not yet known: it is starting')}) already serves "
                f"{self.db_path}; stop it first, or use another --db"
            )
        self._fd = fd
        if LOCK_THE_FILE_ITSELF:
            try:
                self._db_fd = self._lock_database()
            except BaseException:
                self.release()
                raise
        self._write(address=None)
        return self

    def _lock_database(self) -> int:
        # Created if missing: SQLite takes an empty file as a new database.
        # Closed only by release(), after the store has closed: closing any
        # descriptor of a file drops the POSIX locks this process holds on it.
        fd = os.open(self.db_path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if _try_flock(fd):
            return fd
        info = os.fstat(fd)
        os.close(fd)
        pid = _flock_holder(info.st_dev, info.st_ino)
        raise AlreadyServing(
            f"another escalated serve{f' (pid {pid})' if pid else ''} already serves this database file under "
            f"another name (a hard link or a symlink to {self.db_path}: the same file); stop it first, or use another --db"
        )

    def announce(self, address: str) -> None:
        self._write(address=address)

    def release(self) -> None:
        for fd in (self._db_fd, self._fd):
            if fd is not None:
                os.close(fd)  # closing the last descriptor drops the flock
        self._fd = self._db_fd = None

    def _write(self, *, address: str | None) -> None:
        assert self._fd is not None
        raw = (f"pid={os.getpid()}\n" + (f"address={address}\n" if address else "")).encode()
        # Overwrite, then cut: a reader never sees an empty file (the new text
        # starts with the old one's pid line).
        os.pwrite(self._fd, raw, 0)
        os.ftruncate(self._fd, len(raw))

    def __enter__(self) -> ServerLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read(fd: int) -> dict[str, str]:
    raw = os.pread(fd, 4096, 0).decode(errors="replace")
    return dict(line.split("=", 1) for line in raw.splitlines() if "=" in line)


def _flock_holder(device: int, inode: int) -> str | None:
    """The pid holding a flock on this file, from Linux's /proc/locks
    (``1: FLOCK ADVISORY WRITE <pid> <major>:<minor>:<inode> 0 EOF``), or None."""
    wanted = f"{os.major(device):02x}:{os.minor(device):02x}:{inode}"
    try:
        with open("/proc/locks") as locks:
            for line in locks:
                fields = line.split()
                if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == wanted:
                    return fields[4]
    except OSError:
        pass
    return None
