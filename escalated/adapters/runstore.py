"""Where a durable run waits between ``start_run`` and ``resume_run``: one JSON file per run id.

The store is a directory the agent's processes share (the one that starts
runs and the callback receiver that resumes them). A record holds the
framework's own serialised state, the escalation filed for each pending
call, and, once finished, what ``resume_run`` returns again. Writes are
atomic (a reader never sees half a record); ``locked`` holds an exclusive
lock on the run across processes and within one, so two resumes of one run
(a callback and the ``/wait`` fallback, two callbacks, two receivers) take
turns and the second finds the first's outcome instead of running the tools
again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from escalated.errors import EscalatedError

FORMAT_VERSION = 1
PAUSED, RESUMING, FINISHED = "paused", "resuming", "finished"
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,79}")


class RunStoreError(EscalatedError):
    """A run the store does not hold, or a record it cannot use."""

    code, title = "run_store", "Run store"


class RunStore:
    """``RunStore(directory)``: records under ``directory``, created (mode 0700) on first write."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def __repr__(self) -> str:
        return f"RunStore({str(self.directory)!r})"

    def _path(self, run_id: str, suffix: str) -> Path:
        # A run id is the caller's text: only a plain one becomes a file name as it is.
        name = run_id if _PLAIN_ID.fullmatch(run_id) else "run-" + hashlib.sha256(run_id.encode()).hexdigest()[:40]
        return self.directory / f"{name}{suffix}"

    def read(self, run_id: str) -> dict[str, Any] | None:
        """The run's record, or None when the store holds no run of that id."""
        path = self._path(run_id, ".json")
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise RunStoreError(f"cannot read run {run_id!r} from {path}: {exc}") from exc
        if record.get("version") != FORMAT_VERSION or record.get("runId") != run_id:
            raise RunStoreError(f"{path} does not hold run {run_id!r} in the format this version writes")
        return record

    def write(self, run_id: str, **fields: Any) -> dict[str, Any]:
        """Replace the run's record with ``fields`` (atomically: write aside, then rename)."""
        record = {"version": FORMAT_VERSION, "runId": run_id, **fields}
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self._path(run_id, ".json")
        aside = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        # The state may hold the run's context: readable by its owner only.
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        os.replace(aside, path)
        return record

    @contextlib.asynccontextmanager
    async def locked(self, run_id: str) -> AsyncIterator[None]:
        """Hold the run's lock (``flock`` on a file beside the record) without blocking the loop."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self._path(run_id, ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        acquiring = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
        try:
            await asyncio.shield(acquiring)
        except BaseException:
            # Cancelled while the thread still waits: close (and so release) once it has the lock.
            acquiring.add_done_callback(lambda _: os.close(fd))
            raise
        try:
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock
