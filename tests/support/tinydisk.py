"""A real, tiny filesystem that can be filled: tmpfs mounted under tmp_path.

Disk-full tests need the kernel to answer ENOSPC to the server's own writes,
so SQLite sees a real SQLITE_FULL. Mounting needs root (CAP_SYS_ADMIN); where
that is not available the tests that need it are skipped, saying why.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class TinyDisk:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / "filler"

    def fill(self) -> None:
        """Write until the kernel says ENOSPC; nothing else can grow after this."""
        chunk = b"\0" * 65536
        with open(self._filler, "ab", buffering=0) as f:
            while True:
                try:
                    f.write(chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    if len(chunk) == 1:
                        return
                    chunk = chunk[: len(chunk) // 2]  # fill the last partial block too

    def free(self) -> None:
        self._filler.unlink(missing_ok=True)


def mounted_tiny_disk(tmp_path: Path) -> Iterator[TinyDisk]:
    """The fault suite's ``tiny_disk`` fixture (tests/faults/conftest.py): mounts, yields, unmounts."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill (needs root): {mounted.stderr.strip()}")
    try:
        yield TinyDisk(mount_point)
    finally:
        # Lazy: a server the test failed to stop must not leave the mount busy.
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
        os.sync()
