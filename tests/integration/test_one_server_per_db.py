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
