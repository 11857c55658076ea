"""One ``serve`` per SQLite database: an OS lock on a file beside it.

Two servers on one file would each run an SLA clock and a sender (callbacks
sent twice, ``/wait`` on one missing decisions made on the other). The lock
is ``flock`` on ``<db>.serve.lock``: the kernel releases it when the holder
dies, however it dies, so a crashed server (kill -9) never blocks the next
start and there is no stale-pid guessing. The file records the holder's pid
and listening address so the refusal can name them.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from escalated.errors import EscalatedError


class AlreadyServing(EscalatedError):
    """Another live ``serve`` holds this database."""

    status, code, title = 409, "already_serving", "Database already served"


def lock_path(db_path: Path | str) -> Path:
    return Path(f"{db_path}.serve.lock")


class ServerLock:
    """Held from start-up to exit; ``announce`` records where it listens."""

    def __init__(self, db_path: Path | str) -> None:
        self.db_path = Path(db_path)
        self.path = lock_path(db_path)
        self._fd: int | None = None

    def acquire(self) -> ServerLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise AlreadyServing(
                f"another escalated serve (pid {holder.get('pid', '?')}, listening on "
                f"{holder.get('address', 'an address not yet known: it is starting')}) already serves "
                f"{self.db_path}; stop it first, or use another --db"
            ) from None
        self._fd = fd
        self._write(address=None)
        return self

    def announce(self, address: str) -> None:
        self._write(address=address)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None

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


def _read(fd: int) -> dict[str, str]:
    raw = os.pread(fd, 4096, 0).decode(errors="replace")
    return dict(line.split("=", 1) for line in raw.splitlines() if "=" in line)
