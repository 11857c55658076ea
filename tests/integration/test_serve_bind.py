"""A port already in use: one clear line, exit 1, and the bootstrap key kept for the next start (issue 12, point 9)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.support.server import ServerProcess


@pytest.fixture
def taken_port():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def serve_on(db, port: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "escalated", "serve", "--db", str(db), "--port", str(port)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "ESCALATED_DB": ""},
    )  # fmt: skip


def test_port_in_use_prints_one_line_naming_the_address_and_exits_1(tmp_path, taken_port):
    proc = serve_on(tmp_path / "escalated.db", taken_port)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"Error: cannot listen on 127.0.0.1:{taken_port}: another process (another escalated serve?) is "
        "listening there: stop it, or pick a free port with --port"
    ], proc.stderr


def test_a_failed_bind_does_not_spend_the_bootstrap_key(tmp_path, taken_port):
    db = tmp_path / "escalated.db"
    failed = serve_on(db, taken_port)
    assert failed.returncode == 1 and "ain_live_" not in failed.stdout + failed.stderr
    server = ServerProcess(db=db).start()
    try:
        assert server.bootstrap_key and server.bootstrap_key.startswith("ain_live_")
    finally:
        server.stop()


def test_an_address_this_machine_does_not_have_is_one_line_naming_it(tmp_path):
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): assigned to no real interface.
    proc = subprocess.run(
        [sys.executable, "-m", "escalated", "serve", "--db", str(tmp_path / "e.db"), "--host", "192.0.2.1", "--port", "0"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "ESCALATED_DB": ""},
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["Error: cannot listen on 192.0.2.1:0: this machine has no such address: check --host"]
    assert "ain_live_" not in proc.stdout
