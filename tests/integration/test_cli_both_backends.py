"""Every data command does the same on a SQLite path and on a postgresql:// URL.

The real CLI (CliRunner on ``escalated.cli:main``) against a SQLite file in
tmp_path and against a fresh database on the session's real PostgreSQL
server (``postgres_url``); one behaviour per test, each run on both.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner, Result

from escalated.cli import main
from escalated.domain import scopes

KEY = re.compile(r"^ain_live_[0-9A-Za-z]{32,}$")
USER_TOKEN = re.compile(r"^ain_user_[0-9A-Za-z]{32,}$")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "escalated.db")
    return request.getfixturevalue("postgres_url")


def run(db: str, *args: str, ok: bool = True) -> Result:
    result = CliRunner().invoke(main, ["--db", db, *args], env={"ESCALATED_DB": ""})
    if ok:
        assert result.exit_code == 0, (args, result.output, result.exception)
    return result


def refused(db: str, *args: str) -> str:
    """Exit 1, no traceback; the error line."""
    result = run(db, *args, ok=False)
    assert result.exit_code == 1, (args, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.stderr


def keys_listed(db: str, *args: str) -> list[list[str]]:
    return [line.split("\t") for line in run(db, "keys", "list", *args).stdout.splitlines()]


# -- workspaces ----------------------------------------------------------------


def test_workspaces_create_then_list_shows_it_beside_default(db):
    assert run(db, "workspaces", "create", "acme").stdout == "acme\n"
    assert run(db, "workspaces", "list").stdout.split() == ["acme", "default"]


def test_workspaces_create_of_a_taken_name_exits_1(db):
    run(db, "workspaces", "create", "acme")
    assert "workspace 'acme' already exists" in refused(db, "workspaces", "create", "acme")


def test_a_command_in_an_unknown_workspace_exits_1_naming_it(db):
    assert "no workspace named 'nowhere'" in refused(db, "users", "list", "--workspace", "nowhere")


# -- keys ----------------------------------------------------------------------


def test_keys_create_prints_only_a_key_listed_as_active_with_all_scopes(db):
    key = run(db, "keys", "create", "--name", "agent").stdout
    assert KEY.match(key.strip()) and key.count("\n") == 1
    [[key_id, workspace, name, state, granted]] = keys_listed(db)
    assert (workspace, name, state, granted) == ("default", "agent", "active", ",".join(sorted(scopes.ALL_SCOPES)))
    assert key_id.startswith("key_") and key.strip() not in run(db, "keys", "list").stdout


def test_keys_create_with_scope_and_expiry_lists_them(db):
    run(db, "keys", "create", "--scope", "escalations:read", "--expires-in", "2d")
    [[*_, granted]] = keys_listed(db)
    assert granted.startswith("escalations:read expires=")


def test_keys_list_with_a_workspace_shows_only_its_keys(db):
    run(db, "workspaces", "create", "acme")
    run(db, "keys", "create", "--name", "here")
    run(db, "keys", "create", "--name", "there", "--workspace", "acme")
    assert [row[1:3] for row in keys_listed(db)] == [["default", "here"], ["acme", "there"]]
    assert [row[1:3] for row in keys_listed(db, "--workspace", "acme")] == [["acme", "there"]]


def test_keys_revoke_marks_the_key_revoked_in_any_workspace(db):
    run(db, "workspaces", "create", "acme")
    run(db, "keys", "create", "--workspace", "acme")
    [[key_id, *_]] = keys_listed(db)
    assert run(db, "keys", "revoke", key_id).stderr == f"revoked {key_id}\n"
    assert keys_listed(db)[0][3] == "revoked"


@pytest.mark.parametrize("name", ["", "ci\nbot"])
def test_keys_create_refuses_an_empty_or_unprintable_name(db, name):
    # `keys list` is a line per key: a newline in a name made it two.
    assert "a key's name is not empty and has no control characters" in refused(db, "keys", "create", "--name", name)


def test_keys_revoke_of_an_unknown_id_exits_1(db):
    assert "no API key key_nope" in refused(db, "keys", "revoke", "key_nope")


# -- users ---------------------------------------------------------------------


def test_users_add_prints_a_token_and_users_list_shows_name_role_groups_contacts(db):
    added = run(db, "users", "add", "alice", "--group", "finance", "--role", "admin", "--email", "Alice@Example.com")
    assert USER_TOKEN.match(added.stdout.strip())
    run(db, "users", "add", "bob", "--slack-id", "U0BOB")
    assert run(db, "users", "list").stdout == "alice\tadmin\tfinance\talice@example.com\t-\nbob\treviewer\t-\t-\tU0BOB\n"


def test_users_add_of_a_taken_name_exits_1(db):
    run(db, "users", "add", "alice")
    assert "user 'alice' already exists" in refused(db, "users", "add", "alice")


@pytest.mark.parametrize("name", ["alice,bob", "group:finance", "alice\nbob", "alice\tbob"])
def test_users_add_refuses_a_name_no_policy_could_route_to(db, name):
    # A newline or a tab would also break `users list`, a line per user and tab-separated.
    assert "a user needs a name (no commas or control characters, not group:…)" in refused(db, "users", "add", name)
    assert run(db, "users", "list").stdout == ""


@pytest.mark.parametrize("group", ["", "  ", "finance,ops", "fin\tance"])
def test_users_add_refuses_a_group_no_policy_could_route_to(db, group):
    assert "a group is a name without commas or control characters" in refused(db, "users", "add", "alice", "--group", group)
    assert run(db, "users", "list").stdout == ""


def test_users_token_prints_a_new_token(db):
    first = run(db, "users", "add", "alice").stdout.strip()
    second = run(db, "users", "token", "alice").stdout.strip()
    assert USER_TOKEN.match(second) and second != first


def test_users_token_of_an_unknown_user_exits_1(db):
    assert "no user named 'ghost'" in refused(db, "users", "token", "ghost")


def test_users_login_link_prints_a_sign_in_url(db):
    run(db, "users", "add", "alice")
    link = run(db, "users", "login-link", "alice", "--url", "http://example.test:9/").stdout.strip()
    assert re.fullmatch(r"http://example\.test:9/app/login/[A-Za-z0-9_-]{40,}", link)


def test_users_login_link_for_an_unknown_user_exits_1(db):
    assert "no user named 'ghost'" in refused(db, "users", "login-link", "ghost")


# -- policies ------------------------------------------------------------------


def test_policy_set_then_show_as_json(db):
    run(db, "users", "add", "alice")
    run(db, "policy", "set", "refunds.large", "--reviewer", "alice", "--sla", "15m", "--default-choice", "deny")
    assert json.loads(run(db, "policy", "show", "refunds.large").stdout) == {
        "key": "refunds.large",
        "reviewers": ["alice"],
        "notify": [],
        "sla": "15m",
        "defaultChoice": "deny",
        "cancelCallback": False,
        "remindEvery": None,
        "levels": [],
        "quorum": 1,
        "quorumChoices": [],
    }


REVIEW_SHOWN = {
    "remindEvery": "10m",
    "levels": [
        {"after": "15m", "reviewers": ["bob", "group:leads"], "notify": []},
        {"after": "1h", "reviewers": ["carol"], "notify": ["desktop"]},
    ],
    "quorum": 2,
    "quorumChoices": ["approve"],
}


def test_policy_set_takes_reminders_levels_and_quorum(db):
    run(db, "policy", "set", "refunds.large", "--remind-every", "10m", "--level", "15m:bob,group:leads",
        "--level", "1h:carol|desktop", "--quorum", "2", "--quorum-choice", "approve", "--allow-unknown-reviewers")  # fmt: skip
    shown = json.loads(run(db, "policy", "show", "refunds.large").stdout)
    assert {k: shown[k] for k in REVIEW_SHOWN} == REVIEW_SHOWN
    assert run(db, "policy", "list").stdout.split("\t")[4:] == [
        "remind_every=10m", "level=15m:bob,group:leads", "level=1h:carol|desktop", "quorum=2:approve\n",
    ]  # fmt: skip


def test_policy_apply_takes_reminders_levels_and_quorum_from_toml(db, tmp_path):
    file = tmp_path / "policies.toml"
    file.write_text(
        '[policies."refunds.large"]\nremind_every = "10m"\nquorum = 2\nquorum_choices = ["approve"]\n'
        'levels = [{after = "15m", reviewers = ["bob", "group:leads"]},\n'
        '          {after = "1h", reviewers = ["carol"], notify = ["desktop"]}]\n'
    )
    run(db, "policy", "apply", str(file), "--allow-unknown-reviewers")
    shown = json.loads(run(db, "policy", "show", "refunds.large").stdout)
    assert {k: shown[k] for k in REVIEW_SHOWN} == REVIEW_SHOWN


def test_policy_set_refuses_a_level_reviewer_matching_no_user(db):
    error = refused(db, "policy", "set", "refunds.large", "--level", "15m:ghost")
    assert "no user or group matches ghost" in error and "--allow-unknown-reviewers" in error
    assert run(db, "policy", "list").stdout == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--quorum", "2"), "a quorum above 1 needs the choices it applies to"),
        (("--level", "1h:bob", "--level", "15m:carol"), "levels must come in order"),
        (("--level", "bob"), "use AFTER:REVIEWER"),
        (("--remind-every", "0.5s"), "must be at least 1s"),
        (("--level", "15m:bob|pager:1"), "unknown notify target"),
    ],
)
def test_policy_set_refuses_bad_reminders_levels_or_quorum_in_words(db, args, words):
    assert words in refused(db, "policy", "set", "refunds.large", "--allow-unknown-reviewers", *args)
    assert run(db, "policy", "list").stdout == ""


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ('levels = [{after = "15m"}]', "must name at least one reviewer"),
        ('levels = [{after = "15m", reviewers = ["bob"], pager = 1}]', "each level is"),
        ('quorum = "two"', "quorum must be a whole number"),
        ('remind_every = "soon"', "invalid duration"),
    ],
)
def test_policy_apply_refuses_bad_reminders_levels_or_quorum_in_words(db, tmp_path, toml, words):
    file = tmp_path / "policies.toml"
    file.write_text(f'[policies."refunds.large"]\n{toml}\n')
    assert words in refused(db, "policy", "apply", str(file), "--allow-unknown-reviewers")


def test_policy_apply_refuses_a_file_that_is_not_utf8_in_words(db, tmp_path):
    file = tmp_path / "policies.toml"
    file.write_bytes('[policies."refunds.large"]\nsla = "15m" # caf\u00e9\n'.encode("latin-1"))
    assert "not UTF-8 text (byte 44); TOML files are UTF-8" in refused(db, "policy", "apply", str(file))


def test_policy_set_refuses_a_reviewer_matching_no_user(db):
    error = refused(db, "policy", "set", "refunds.ghost", "--reviewer", "ghost")
    assert "no user or group matches ghost" in error and "--allow-unknown-reviewers" in error
    assert run(db, "policy", "list").stdout == ""


def test_policy_set_with_allow_unknown_reviewers_saves_and_warns(db):
    result = run(db, "policy", "set", "refunds.ghost", "--reviewer", "ghost", "--allow-unknown-reviewers")
    assert "warning: policy refunds.ghost routes to ghost, matching no user" in result.stderr
    assert "warning: policy refunds.ghost" in run(db, "policy", "list").stderr


def test_policy_list_names_each_policy(db):
    run(db, "policy", "set", "b.second")
    run(db, "policy", "set", "a.first", "--cancel-callback")
    assert run(db, "policy", "list").stdout.splitlines() == [
        "a.first\tno sla\treviewers=*\tnotify=-\tcancel_callback",
        "b.second\tno sla\treviewers=*\tnotify=-",
    ]
    assert [p["key"] for p in json.loads(run(db, "policy", "list", "--json").stdout)] == ["a.first", "b.second"]


def test_policy_delete_removes_it_and_a_second_delete_exits_1(db):
    run(db, "policy", "set", "refunds.large")
    assert run(db, "policy", "delete", "refunds.large").stderr == "deleted refunds.large\n"
    assert "no policy 'refunds.large' in workspace 'default'" in refused(db, "policy", "delete", "refunds.large")
    assert "no policy 'refunds.large'" in refused(db, "policy", "show", "refunds.large")


def test_policy_apply_with_prune_replaces_the_workspaces_policies(db, tmp_path):
    run(db, "policy", "set", "old.one")
    file = tmp_path / "policies.toml"
    file.write_text('[policies."refunds.large"]\nsla = "1h"\ndefault_choice = "deny"\n[policies."refunds.small"]\n')
    result = run(db, "policy", "apply", str(file), "--prune")
    assert result.stderr == "applied 2 policies\npruned old.one\n"
    assert [p["key"] for p in json.loads(run(db, "policy", "list", "--json").stdout)] == ["refunds.large", "refunds.small"]


def test_policy_apply_refused_for_one_policy_applies_none(db, tmp_path):
    file = tmp_path / "policies.toml"
    file.write_text('[policies."refunds.large"]\n[policies."refunds.ghost"]\nreviewers = ["ghost"]\n')
    assert "no user or group matches ghost" in refused(db, "policy", "apply", str(file))
    assert run(db, "policy", "list").stdout == ""


def test_policy_apply_with_nul_in_a_reviewer_exits_1_in_words(db, tmp_path):
    # PostgreSQL text cannot hold NUL (it was a traceback there); refused alike on SQLite.
    file = tmp_path / "policies.toml"
    file.write_text('[policies."refunds.large"]\nreviewers = ["al\\u0000ice"]\n')
    assert "reviewers must not contain the NUL character" in refused(db, "policy", "apply", str(file), "--allow-unknown-reviewers")
    assert run(db, "policy", "list").stdout == ""


# -- migrate -------------------------------------------------------------------


def test_migrate_on_a_migrated_database_says_it_is_up_to_date(db):
    run(db, "users", "list")  # created and migrated on first use
    assert run(db, "migrate").stdout.endswith(" is up to date\n")
