"""One ``escalated serve`` per SQLite database (issue #12, point 3).

Real subprocesses throughout: the first server holds the database, a second
one must refuse (exit 1, naming the first's pid and address), and a server
killed with SIGKILL must not block the next start.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.server import ServerProcess, start_server


def serve_again(db) -> subprocess.CompletedProcess:
    env = {**os.environ, "ESCALATED_DB": str(db)}
    return subprocess.run(
        [sys.executable, "-m", "escalated", "serve", "--port", "0"],
        env=env, capture_output=True, text=True, timeout=20,
    )


def test_a_second_serve_on_the_same_database_exits_1_naming_the_first(tmp_path):
    first = start_server(tmp_path)
    try:
        second = serve_again(first.db)
        assert second.returncode == 1, (second.stdout, second.stderr)
        assert f"pid {first.pid}" in second.stderr
        assert first.url.removeprefix("http://") in second.stderr
        assert "Listening" not in second.stdout and "Traceback" not in second.stderr
    finally:
        first.stop()


def test_a_server_killed_with_sigkill_does_not_block_the_next_start(tmp_path):
    first = start_server(tmp_path)
    first.kill()
    second = ServerProcess(db=first.db).start()
    try:
        assert second.url
    finally:
        second.stop()


def test_a_stopped_server_lets_the_next_one_start(tmp_path):
    first = start_server(tmp_path)
    first.stop()
    second = ServerProcess(db=first.db).start()
    second.stop()


def test_a_symlink_or_a_hard_link_to_the_database_is_the_same_database(tmp_path):
    """Issue #24 point 4: the lock is the file's (device and inode), not its
    name. A server through a symlink, then one through a hard link: each
    refuses while the first serves the file (with a hard link SQLite would
    even keep a second WAL, so the two would see different data)."""
    first = start_server(tmp_path)
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "via-symlink.db").symlink_to(first.db)
    os.link(first.db, other / "via-hard-link.db")
    try:
        through_symlink = serve_again(other / "via-symlink.db")
        assert through_symlink.returncode == 1, (through_symlink.stdout, through_symlink.stderr)
        assert f"pid {first.pid}" in through_symlink.stderr  # the lock file beside the real path names the holder
        assert first.url.removeprefix("http://") in through_symlink.stderr
        through_hard_link = serve_again(other / "via-hard-link.db")
        assert through_hard_link.returncode == 1, (through_hard_link.stdout, through_hard_link.stderr)
        assert f"pid {first.pid}" in through_hard_link.stderr and "hard link" in through_hard_link.stderr
        for refused in (through_symlink, through_hard_link):
            assert "Listening" not in refused.stdout and "Traceback" not in refused.stderr
    finally:
        first.stop()
    again = ServerProcess(db=other / "via-hard-link.db").start()  # the lock went with the first server
    again.stop()
