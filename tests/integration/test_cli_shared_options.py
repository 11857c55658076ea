"""--db and --workspace are accepted before the command name, on the group, or after it (issue 12, point 11)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from escalated.cli import main


def run(*args: str, env: dict | None = None) -> str:
    result = CliRunner().invoke(main, list(args), env={"ESCALATED_DB": "", **(env or {})})
    assert result.exit_code == 0, result.output
    return result.output.strip()


@pytest.mark.parametrize(
    "placement",
    [
        lambda db, cmd: ["--db", db, *cmd],  # escalated --db X users add carol
        lambda db, cmd: [cmd[0], "--db", db, *cmd[1:]],  # escalated users --db X add carol
        lambda db, cmd: [*cmd, "--db", db],  # escalated users add carol --db X
    ],
    ids=["before-command", "on-group", "after-command"],
)
@pytest.mark.parametrize(
    ("command", "check"),
    [
        (["users", "add", "carol"], (["users", "list"], "carol")),
        (["keys", "create", "--name", "agent-7"], (["keys", "list"], "agent-7")),
        (["workspaces", "create", "team-b"], (["workspaces", "list"], "team-b")),
        (["policy", "set", "refunds.small"], (["policy", "list"], "refunds.small")),
    ],
    ids=["users-add", "keys-create", "workspaces-create", "policy-set"],
)
def test_db_is_honoured_wherever_it_is_placed(tmp_path, placement, command, check):
    db = str(tmp_path / "placed.db")
    run(*placement(db, command))
    listing, expected = check
    assert expected in run(*listing, "--db", db)
    assert not (tmp_path / "other.db").exists()


def test_db_before_the_command_beats_the_environment(tmp_path):
    env_db, flag_db = tmp_path / "env.db", tmp_path / "flag.db"
    run("--db", str(flag_db), "users", "add", "dora", env={"ESCALATED_DB": str(env_db)})
    assert "dora" in run("users", "list", "--db", str(flag_db))
    assert not env_db.exists()


def test_the_most_specific_db_wins(tmp_path):
    outer, inner = tmp_path / "outer.db", tmp_path / "inner.db"
    run("--db", str(outer), "users", "add", "erin", "--db", str(inner))
    assert "erin" in run("users", "list", "--db", str(inner))
    assert not outer.exists()


def test_environment_db_still_applies_when_no_flag_is_given(tmp_path):
    env_db = tmp_path / "env.db"
    run("users", "add", "fay", env={"ESCALATED_DB": str(env_db)})
    assert "fay" in run("--db", str(env_db), "users", "list")


def test_workspace_before_the_command_is_honoured(tmp_path):
    db = str(tmp_path / "ws.db")
    run("--db", db, "workspaces", "create", "team-c")
    run("--db", db, "--workspace", "team-c", "users", "add", "gus")
    assert "gus" in run("--db", db, "users", "list", "-w", "team-c")
    assert "gus" not in run("--db", db, "users", "list")


def test_keys_list_without_a_workspace_still_lists_every_workspace(tmp_path):
    db = str(tmp_path / "all.db")
    run("--db", db, "workspaces", "create", "team-d")
    run("--db", db, "keys", "create", "-n", "in-default")
    run("--db", db, "-w", "team-d", "keys", "create", "-n", "in-team-d")
    listing = run("--db", db, "keys", "list")
    assert "in-default" in listing and "in-team-d" in listing
    assert "in-default" not in run("--db", db, "-w", "team-d", "keys", "list")


def test_serve_takes_db_before_the_command_name(tmp_path):
    db = tmp_path / "served.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "escalated", "--db", str(db), "serve", "--port", "0"],
        env={**os.environ, "ESCALATED_DB": "", "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = iter(proc.stdout.readline, "")  # ends when the process exits
        assert any(line.startswith("Listening on http://") for line in lines)
        assert db.exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
        proc.stdout.close()
