"""A policy that routes to a reviewer who does not exist is refused or flagged everywhere (issue 12, point 12)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from escalated.cli import main
from tests.support.server import ServerProcess

REFUSAL_HINT = "--allow-unknown-reviewers"


def cli(db, *args: str, ok: bool = True):
    result = CliRunner().invoke(main, ["--db", str(db), *args], env={"ESCALATED_DB": ""})
    assert (result.exit_code == 0) == ok, result.output
    return result


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "p.db"
    cli(path, "users", "add", "alice", "--group", "finance")
    cli(path, "users", "add", "bob")
    return path


def policy_keys(db) -> list[str]:
    return [p["key"] for p in json.loads(cli(db, "policy", "list", "--json").stdout)]


def test_policy_set_refuses_an_unknown_user_and_lists_the_names_that_exist(db):
    out = cli(db, "policy", "set", "refunds.large", "--reviewer", "alcie", ok=False).output
    assert "alcie" in out and "users: alice, bob" in out and "groups: group:finance" in out and REFUSAL_HINT in out
    assert "Traceback" not in out
    assert policy_keys(db) == []


def test_policy_set_refuses_a_group_no_user_is_in(db):
    out = cli(db, "policy", "set", "refunds.large", "--reviewer", "group:legal", ok=False).output
    assert "group:legal" in out
    assert policy_keys(db) == []


def test_policy_set_accepts_existing_users_and_groups(db):
    cli(db, "policy", "set", "refunds.large", "--reviewer", "alice", "--reviewer", "bob", "--reviewer", "group:finance")
    assert policy_keys(db) == ["refunds.large"]


def test_policy_set_with_the_flag_saves_an_unknown_reviewer_and_warns(db):
    result = cli(db, "policy", "set", "refunds.large", "--reviewer", "carol", REFUSAL_HINT)
    assert "policy refunds.large routes to carol, matching no user" in result.stderr
    assert policy_keys(db) == ["refunds.large"]


def test_policy_apply_refuses_a_file_with_an_unknown_reviewer_and_applies_nothing(db, tmp_path):
    file = tmp_path / "policies.toml"
    file.write_text('[policies."a.ok"]\nreviewers = ["alice"]\n[policies."a.bad"]\nreviewers = ["group:legal"]\n')
    out = cli(db, "policy", "apply", str(file), ok=False).output
    assert "a.bad" in out and "group:legal" in out and REFUSAL_HINT in out
    assert policy_keys(db) == []


def test_policy_apply_with_the_flag_applies_and_warns(db, tmp_path):
    file = tmp_path / "policies.toml"
    file.write_text('[policies."a.bad"]\nreviewers = ["ghost"]\n')
    result = cli(db, "policy", "apply", str(file), REFUSAL_HINT)
    assert "policy a.bad routes to ghost, matching no user: its escalations reach no reviewer" in result.stderr
    assert policy_keys(db) == ["a.bad"]


def test_policy_list_and_show_flag_a_policy_whose_reviewers_match_nobody(db):
    cli(db, "policy", "set", "a.fine", "--reviewer", "alice")
    cli(db, "policy", "set", "a.lost", "--reviewer", "ghost", REFUSAL_HINT)
    listed = cli(db, "policy", "list")
    assert "a.lost routes to ghost" in listed.stderr and "a.fine" not in listed.stderr
    shown = cli(db, "policy", "show", "a.lost")
    assert "a.lost routes to ghost" in shown.stderr
    assert json.loads(shown.stdout)["reviewers"] == ["ghost"]  # stdout stays the documented JSON
    assert cli(db, "policy", "show", "a.fine").stderr == ""


def test_reviewers_are_checked_against_the_policys_own_workspace(tmp_path):
    db = tmp_path / "p.db"
    cli(db, "workspaces", "create", "team-x")
    cli(db, "-w", "team-x", "users", "add", "zed", "--group", "ops")
    cli(db, "-w", "team-x", "policy", "set", "ops.page", "--reviewer", "group:ops")
    assert cli(db, "-w", "team-x", "policy", "list").stderr == ""
    assert "group:ops" in cli(db, "policy", "set", "ops.page", "--reviewer", "group:ops", ok=False).output


def test_serve_logs_policies_whose_reviewers_match_nobody_at_start_up(db):
    cli(db, "policy", "set", "a.lost", "--reviewer", "ghost", REFUSAL_HINT)
    cli(db, "policy", "set", "a.fine", "--reviewer", "alice")
    server = ServerProcess(db=db).start()
    try:
        startup = "".join(server.output)
        assert "WARNING" in startup and "policy a.lost routes to ghost, matching no user" in startup
        assert "a.fine" not in startup
    finally:
        server.stop()
