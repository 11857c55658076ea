"""A database path that cannot be used names the path and the reason, exit 1, no traceback (issue 12, point 10).

Conditions are ones that fail even as root: a directory that would have to
be created under a regular file, a file that is not a database, a directory
SQLite cannot create files in (/proc), and a read-only mount when the test
may mount one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main


def refused(db: Path, *command: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *command], env={"ESCALATED_DB": ""})
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.output


def test_a_directory_under_a_regular_file_names_the_file_in_the_way(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a directory")
    out = refused(blocker / "data" / "escalated.db", "users", "list")
    assert str(blocker / "data" / "escalated.db") in out
    assert f"{blocker} is a file, not a directory" in out


def test_a_file_that_is_not_a_database_is_named_and_left_alone(tmp_path):
    junk = tmp_path / "escalated.db"
    junk.write_bytes(b"these are my notes, not SQLite\n" * 100)
    out = refused(junk, "keys", "create")
    assert str(junk) in out and "not an SQLite database" in out
    assert junk.read_bytes() == b"these are my notes, not SQLite\n" * 100


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux /proc")
def test_a_directory_sqlite_cannot_create_files_in_is_named():
    out = refused(Path("/proc/escalated-test.db"), "policy", "list")
    assert "/proc/escalated-test.db" in out
    # As root SQLite simply cannot create a file there; as anyone else the directory is not writable.
    assert "cannot create a file in /proc" in out or "directory /proc is not writable" in out


@pytest.fixture
def read_only_dir(tmp_path):
    mount_point = tmp_path / "ro"
    mount_point.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(mount_point)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def test_a_read_only_file_system_is_named_as_the_reason(read_only_dir):
    out = refused(read_only_dir / "escalated.db", "users", "add", "alice")
    assert f"{read_only_dir} is on a read-only file system" in out


def test_serve_on_a_file_that_is_not_a_database_prints_one_line_and_exits_1(tmp_path):
    junk = tmp_path / "escalated.db"
    junk.write_text("not a database")
    proc = subprocess.run(
        [sys.executable, "-m", "escalated", "serve", "--port", "0", "--db", str(junk)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "ESCALATED_DB": ""},
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"Error: cannot use database {junk}: the file exists but is not an SQLite database (is --db pointing at the right file?)"
    ]
    assert "ain_live_" not in proc.stdout


def test_serve_under_a_regular_file_prints_one_line_and_exits_1(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file")
    proc = subprocess.run(
        [sys.executable, "-m", "escalated", "serve", "--port", "0", "--db", str(blocker / "escalated.db")],
        capture_output=True, text=True, timeout=60, env={**os.environ, "ESCALATED_DB": ""},
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"Error: cannot use database {blocker / 'escalated.db'}: {blocker} is a file, not a directory, "
        "so the database directory cannot be created there"
    ]
