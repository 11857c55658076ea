"""CONTRACT §1: the data commands, through CliRunner on ``escalated.cli:main``.

Where a command's effect is observable over HTTP, a real server on the same
database checks it, without a restart.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import TypeVar

import pytest
from click.testing import CliRunner

from escalated.cli import main
from escalated.domain import scopes, tokens
from escalated.timeutil import parse_timestamp_ms
from tests.support.api import escalation_body, unique

KEY = re.compile(r"^ain_live_[0-9A-Za-z]{32,}$")
USER_TOKEN = re.compile(r"^ain_user_[0-9A-Za-z]{32,}$")
# A running PostgreSQL server hears of a key, user or policy changed by the
# CLI through its doorbell, within 1 s (docs/CONTRACT.md); slack for a busy machine.
CONFIG_BOUND_S = 1.0 + 4.0
T = TypeVar("T")


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def run(runner, db, *args, env=None, ok=True, input=None):
    result = runner.invoke(main, [*args[:2], "--db", str(db), *args[2:]] if db else list(args), env=env, input=input)
    if ok:
        assert result.exit_code == 0, (args, result.output, result.exception)
    return result


def within_config_bound(read: Callable[[], T], done: Callable[[T], bool]) -> T:
    """``read()`` until ``done`` holds or the bound has passed; its last value."""
    deadline = time.monotonic() + CONFIG_BOUND_S
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.02)
        value = read()
    return value


def fails_cleanly(result, *words: str) -> None:
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    for word in words:
        assert word in result.stderr, result.stderr


# -- keys ----------------------------------------------------------------------


def test_keys_create_prints_only_the_key(runner, live):
    result = run(runner, live.db, "keys", "create")
    assert KEY.match(result.stdout.strip())
    assert result.stdout.count("\n") == 1


def test_keys_create_key_works_on_a_running_server_at_once(runner, live):
    key = run(runner, live.db, "keys", "create", "--name", "cli-made").stdout.strip()
    esc = live.create(key)
    assert esc["history"][0]["by"] == "key:cli-made"


def test_keys_create_defaults_to_all_five_scopes(runner, live):
    key = run(runner, live.db, "keys", "create").stdout.strip()
    listed = run(runner, live.db, "keys", "list").stdout
    line = next(ln for ln in listed.splitlines() if ln.startswith(live.key_id(key)))
    assert all(s in line for s in scopes.ALL_SCOPES)


def test_keys_create_with_scope_issues_a_narrower_key(runner, live):
    key = run(runner, live.db, "keys", "create", "--scope", scopes.READ).stdout.strip()
    assert live.api.get("/escalations", token=key).status == 200
    live.api.post("/escalations", token=key, json_body=escalation_body()).problem(403, "insufficient_scope")


def test_keys_create_in_another_workspace(runner, live, admin_key):
    ws = live.workspace()
    key = run(runner, live.db, "keys", "create", "--workspace", ws).stdout.strip()
    esc = live.create(admin_key)
    live.api.get(f"/escalations/{esc['id']}", token=key).problem(404, "not_found")


def test_keys_create_with_an_unknown_scope_fails_cleanly(runner, live):
    fails_cleanly(run(runner, live.db, "keys", "create", "--scope", "escalations:all", ok=False))


def test_keys_create_in_an_unknown_workspace_fails_cleanly(runner, live):
    fails_cleanly(run(runner, live.db, "keys", "create", "--workspace", "nowhere", ok=False), "nowhere")


def test_keys_create_with_an_absurd_expiry_fails_cleanly_and_keys_list_still_works(runner, tmp_path):
    db = tmp_path / "k.db"
    fails_cleanly(run(runner, db, "keys", "create", "--expires-in", "99999999999d", ok=False), "duration")
    assert run(runner, db, "keys", "list").stdout == ""


def test_keys_list_never_shows_a_secret(runner, live):
    key = run(runner, live.db, "keys", "create", "--name", "listed").stdout.strip()
    listed = run(runner, live.db, "keys", "list")
    assert live.key_id(key) in listed.stdout and "listed" in listed.stdout
    assert "ain_live_" not in listed.output and tokens.hash_token(key) not in listed.output


def test_keys_revoke_stops_the_key_on_a_running_server(runner, live):
    key = run(runner, live.db, "keys", "create").stdout.strip()
    assert live.api.get("/escalations", token=key).status == 200
    key_id = live.key_id(key)
    run(runner, live.db, "keys", "revoke", key_id)
    resp = within_config_bound(lambda: live.api.get("/escalations", token=key), lambda r: r.status != 200)
    resp.problem(401, "unauthenticated")
    line = next(ln for ln in run(runner, live.db, "keys", "list").stdout.splitlines() if ln.startswith(key_id))
    assert "revoked" in line


def test_keys_revoke_of_an_unknown_id_fails_cleanly(runner, live):
    fails_cleanly(run(runner, live.db, "keys", "revoke", "key_nope", ok=False), "key_nope")


# -- users ---------------------------------------------------------------------


def test_users_add_prints_only_the_token(runner, live):
    result = run(runner, live.db, "users", "add", unique("frank"))
    assert USER_TOKEN.match(result.stdout.strip()) and result.stdout.count("\n") == 1


def test_users_add_token_works_with_its_role(runner, live):
    reviewer = run(runner, live.db, "users", "add", unique("gina")).stdout.strip()
    admin = run(runner, live.db, "users", "add", unique("hank"), "--role", "admin").stdout.strip()
    assert live.api.get("/escalations", token=reviewer).status == 200
    live.api.post("/escalations", token=reviewer, json_body=escalation_body()).problem(403, "insufficient_scope")
    assert live.api.post("/escalations", token=admin, json_body=escalation_body()).status == 201


def test_users_add_group_routes_escalations_to_the_user(runner, live, admin_key):
    group = unique("grp")
    token = run(runner, live.db, "users", "add", unique("ivy"), "--group", group).stdout.strip()
    esc = live.create(admin_key, policy=live.policy(reviewers=(f"group:{group}",)))
    assert live.api.get(f"/escalations/{esc['id']}", token=token).status == 200


def test_users_add_twice_fails_cleanly(runner, live):
    name = unique("jack")
    run(runner, live.db, "users", "add", name)
    fails_cleanly(run(runner, live.db, "users", "add", name, ok=False), name)


def test_users_add_with_an_unknown_role_fails_cleanly(runner, live):
    fails_cleanly(run(runner, live.db, "users", "add", unique("kim"), "--role", "owner", ok=False))


def test_users_list_shows_names_roles_and_groups_but_no_token(runner, live):
    name = unique("lee")
    token = run(runner, live.db, "users", "add", name, "--group", "finance", "--role", "admin").stdout.strip()
    listed = run(runner, live.db, "users", "list").stdout
    line = next(ln for ln in listed.splitlines() if ln.startswith(name))
    assert "admin" in line and "finance" in line
    assert token not in listed and "ain_user_" not in listed and tokens.hash_token(token) not in listed


def test_users_token_rotates_the_token(runner, live):
    name = unique("mia")
    old = run(runner, live.db, "users", "add", name).stdout.strip()
    new = run(runner, live.db, "users", "token", name).stdout.strip()
    assert USER_TOKEN.match(new) and new != old
    live.api.get("/escalations", token=old).problem(401, "unauthenticated")
    assert live.api.get("/escalations", token=new).status == 200


def test_users_token_of_an_unknown_user_fails_cleanly(runner, live):
    fails_cleanly(run(runner, live.db, "users", "token", "nobody-here", ok=False), "nobody-here")


# -- workspaces ----------------------------------------------------------------


def test_workspaces_create_then_list(runner, tmp_path):
    db = tmp_path / "ws.db"
    run(runner, db, "workspaces", "create", "acme")
    assert run(runner, db, "workspaces", "list").stdout.split() == ["acme", "default"]


def test_workspaces_create_twice_fails_cleanly(runner, tmp_path):
    db = tmp_path / "ws.db"
    run(runner, db, "workspaces", "create", "acme")
    fails_cleanly(run(runner, db, "workspaces", "create", "acme", ok=False), "acme")


def test_default_workspace_exists_on_a_new_database(runner, tmp_path):
    assert run(runner, tmp_path / "fresh.db", "workspaces", "list").stdout.split() == ["default"]


def test_database_is_created_and_migrated_on_first_use_in_a_new_directory(runner, tmp_path):
    db = tmp_path / "nested" / "dir" / "escalated.db"
    run(runner, db, "policy", "set", "a.b")
    assert db.exists()
    assert json.loads(run(runner, db, "policy", "list", "--json").stdout)[0]["key"] == "a.b"


def test_escalated_db_environment_variable_selects_the_database(runner, tmp_path):
    db = tmp_path / "from-env.db"
    runner.invoke(main, ["workspaces", "create", "via-env"], env={"ESCALATED_DB": str(db)})
    assert db.exists()
    assert "via-env" in run(runner, db, "workspaces", "list").stdout


def test_db_option_wins_over_the_environment(runner, tmp_path):
    env_db, flag_db = tmp_path / "env.db", tmp_path / "flag.db"
    result = runner.invoke(main, ["workspaces", "create", "flagged", "--db", str(flag_db)], env={"ESCALATED_DB": str(env_db)})
    assert result.exit_code == 0
    assert "flagged" in run(runner, flag_db, "workspaces", "list").stdout
    assert "flagged" not in run(runner, env_db, "workspaces", "list").stdout


def test_default_database_lives_under_xdg_data_home(runner, tmp_path):
    result = runner.invoke(main, ["workspaces", "list"], env={"XDG_DATA_HOME": str(tmp_path), "ESCALATED_DB": None})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "escalated" / "escalated.db").exists()


def test_without_xdg_data_home_the_default_database_lives_under_the_home_directory(runner, tmp_path):
    """The contract's default when XDG_DATA_HOME is unset: ~/.local/share/escalated/escalated.db."""
    result = runner.invoke(main, ["workspaces", "list"], env={"XDG_DATA_HOME": None, "HOME": str(tmp_path), "ESCALATED_DB": None})
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".local" / "share" / "escalated" / "escalated.db").exists()


# -- policy --------------------------------------------------------------------


def add_alice_in_finance(runner, db) -> None:
    """Policies may only route to reviewers who exist (see test_cli_policy_reviewers.py)."""
    run(runner, db, "users", "add", "alice", "--group", "finance")


def test_policy_set_then_show_as_json(runner, tmp_path):
    db = tmp_path / "p.db"
    add_alice_in_finance(runner, db)
    run(runner, db, "policy", "set", "refunds.large", "--sla", "15m", "--default-choice", "deny",
        "--reviewer", "alice", "--reviewer", "group:finance", "--notify", "desktop")  # fmt: skip
    shown = json.loads(run(runner, db, "policy", "show", "refunds.large").stdout)
    assert shown == {
        "key": "refunds.large",
        "reviewers": ["alice", "group:finance"],
        "notify": ["desktop"],
        "sla": "15m",
        "defaultChoice": "deny",
        "cancelCallback": False,
        "remindEvery": None,
        "levels": [],
        "quorum": 1,
        "quorumChoices": [],
    }


def test_policy_set_replaces_the_policy(runner, tmp_path):
    db = tmp_path / "p.db"
    add_alice_in_finance(runner, db)
    run(runner, db, "policy", "set", "a.b", "--sla", "15m", "--default-choice", "deny", "--reviewer", "alice")
    run(runner, db, "policy", "set", "a.b")
    shown = json.loads(run(runner, db, "policy", "show", "a.b").stdout)
    assert shown["sla"] is None and shown["reviewers"] == [] and shown["defaultChoice"] is None


def test_policy_list_json_lists_every_policy(runner, tmp_path):
    db = tmp_path / "p.db"
    run(runner, db, "policy", "set", "b.two")
    run(runner, db, "policy", "set", "a.one", "--sla", "PT2H", "--default-choice", "no")
    listed = json.loads(run(runner, db, "policy", "list", "--json").stdout)
    assert [p["key"] for p in listed] == ["a.one", "b.two"]
    assert listed[0]["sla"] == "2h"


def test_policy_list_plain_names_each_policy(runner, tmp_path):
    db = tmp_path / "p.db"
    run(runner, db, "policy", "set", "a.one")
    assert "a.one" in run(runner, db, "policy", "list").stdout


def test_policy_delete_removes_it(runner, tmp_path):
    db = tmp_path / "p.db"
    run(runner, db, "policy", "set", "a.one")
    run(runner, db, "policy", "delete", "a.one")
    assert json.loads(run(runner, db, "policy", "list", "--json").stdout) == []
    fails_cleanly(run(runner, db, "policy", "show", "a.one", ok=False), "a.one")


def test_policy_delete_of_an_unknown_key_fails_cleanly(runner, tmp_path):
    fails_cleanly(run(runner, tmp_path / "p.db", "policy", "delete", "no.such", ok=False), "no.such")


@pytest.mark.parametrize(
    "args",
    [
        ("Refunds.Large",),
        ("Refunds.large",),
        ("a.b", "--sla", "15m"),
        ("a.b", "--sla", "soon", "--default-choice", "deny"),
        ("a.b", "--sla", "0s", "--default-choice", "deny"),
        ("a.b", "--notify", "carrier-pigeon:home"),
        ("a.b", "--reviewer", "group:"),
        ("a.b", "--sla", "99999999999d", "--default-choice", "deny"),
    ],
    ids=["bad-key", "upper-first-word", "sla-without-default", "bad-duration", "zero-duration", "bad-notify", "empty-group", "absurd-sla"],
)
def test_policy_set_with_bad_input_fails_cleanly_and_saves_nothing(runner, tmp_path, args):
    db = tmp_path / "p.db"
    fails_cleanly(run(runner, db, "policy", "set", *args, ok=False), "Error")
    assert json.loads(run(runner, db, "policy", "list", "--json").stdout) == []


POLICY_FILE = """
[workspace]
name = "default"

[policies."refunds.large"]
reviewers = ["alice", "group:finance"]
notify = ["webhook:http://127.0.0.1:9100/hook", "email:ops@example.com", "desktop"]
sla = "15m"
default_choice = "deny"

[policies."support.small"]
"""


def test_policy_apply_creates_the_files_policies(runner, tmp_path):
    db, file = tmp_path / "p.db", tmp_path / "policies.toml"
    file.write_text(POLICY_FILE)
    add_alice_in_finance(runner, db)
    run(runner, db, "policy", "apply", str(file))
    listed = {p["key"]: p for p in json.loads(run(runner, db, "policy", "list", "--json").stdout)}
    assert set(listed) == {"refunds.large", "support.small"}
    # policy list shows a webhook URL masked: scheme, host and its last 4 characters (CONTRACT §16)
    assert listed["refunds.large"]["notify"] == ["webhook:http://127.0.0.1:9100/…hook", "email:ops@example.com", "desktop"]
    assert listed["refunds.large"]["sla"] == "15m" and listed["refunds.large"]["defaultChoice"] == "deny"


def test_policy_apply_without_prune_keeps_other_policies(runner, tmp_path):
    db, file = tmp_path / "p.db", tmp_path / "policies.toml"
    run(runner, db, "policy", "set", "keep.me")
    file.write_text(POLICY_FILE)
    add_alice_in_finance(runner, db)
    run(runner, db, "policy", "apply", str(file))
    keys = {p["key"] for p in json.loads(run(runner, db, "policy", "list", "--json").stdout)}
    assert keys == {"keep.me", "refunds.large", "support.small"}


def test_policy_apply_with_prune_deletes_policies_the_file_does_not_name(runner, tmp_path):
    db, file = tmp_path / "p.db", tmp_path / "policies.toml"
    run(runner, db, "policy", "set", "old.one")
    file.write_text(POLICY_FILE)
    add_alice_in_finance(runner, db)
    run(runner, db, "policy", "apply", str(file), "--prune")
    keys = {p["key"] for p in json.loads(run(runner, db, "policy", "list", "--json").stdout)}
    assert keys == {"refunds.large", "support.small"}


def test_policy_apply_targets_the_files_workspace(runner, tmp_path):
    db, file = tmp_path / "p.db", tmp_path / "policies.toml"
    run(runner, db, "workspaces", "create", "acme")
    file.write_text('[workspace]\nname = "acme"\n[policies."a.b"]\n')
    run(runner, db, "policy", "apply", str(file))
    assert json.loads(run(runner, db, "policy", "list", "--json", "--workspace", "acme").stdout)[0]["key"] == "a.b"
    assert json.loads(run(runner, db, "policy", "list", "--json").stdout) == []


@pytest.mark.parametrize(
    "text",
    [
        "this is = not toml [",
        '[policies."a.b"]\nsla = "15m"\n',
        '[policies."a.b"]\ncolour = "red"\n',
        '[policies."a.b"]\n[policies."Bad Key"]\n',
        '[policies."a.b"]\nreviewers = "alice"\n',
        '[settings]\nx = 1\n',
        # Each of these four was a TypeError or AttributeError traceback.
        'workspace = 5\n[policies."a.b"]\n',
        '[workspace]\nname = 5\n[policies."a.b"]\n',
        '[policies."a.b"]\nsla = "15m"\ndefault_choice = 5\n',
        '[policies."a.b"]\nsla = 15\ndefault_choice = "deny"\n',
    ],
    ids=[
        "syntax", "sla-without-default", "unknown-setting", "bad-key", "reviewers-not-a-list", "unknown-table",
        "workspace-not-a-table", "workspace-name-not-a-string", "default-choice-not-a-string", "sla-not-a-string",
    ],
)
def test_policy_apply_with_a_bad_file_fails_cleanly_and_applies_nothing(runner, tmp_path, text):
    db, file = tmp_path / "p.db", tmp_path / "policies.toml"
    run(runner, db, "policy", "set", "keep.me")
    file.write_text(text)
    fails_cleanly(run(runner, db, "policy", "apply", str(file), "--prune", ok=False), "Error")
    assert [p["key"] for p in json.loads(run(runner, db, "policy", "list", "--json").stdout)] == ["keep.me"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('workspace = 5\n[policies."a.b"]\n', "workspace must be a table"),
        ('[workspace]\nname = 5\n[policies."a.b"]\n', "workspace.name must be a string"),
        ('[policies."a.b"]\nsla = "15m"\ndefault_choice = 5\n', "policies.a.b.default_choice must be a string"),
        ('[policies."a.b"]\nsla = 15\ndefault_choice = "deny"\n', "policies.a.b.sla must be a string"),
    ],
)
def test_policy_apply_names_the_setting_of_the_wrong_toml_type(runner, tmp_path, text, words):
    # Before: two tracebacks, and 'invalid duration' / 'no workspace named 5' about text the file does not hold.
    file = tmp_path / "policies.toml"
    file.write_text(text)
    fails_cleanly(run(runner, tmp_path / "p.db", "policy", "apply", str(file), ok=False), words)


def test_policy_apply_of_a_missing_file_fails_cleanly(runner, tmp_path):
    fails_cleanly(run(runner, tmp_path / "p.db", "policy", "apply", str(tmp_path / "nope.toml"), ok=False))


def test_policy_change_takes_effect_in_a_running_server_without_restart(runner, live, admin_key):
    key = unique("live") + ".policy"
    run(runner, live.db, "policy", "set", key, "--sla", "15m", "--default-choice", "deny")
    first = live.create(admin_key, policy=key)
    run(runner, live.db, "policy", "set", key, "--sla", "2h", "--default-choice", "deny")
    sla_ms = lambda esc: parse_timestamp_ms(esc["deadlineAt"]) - parse_timestamp_ms(esc["createdAt"])  # noqa: E731
    second = within_config_bound(lambda: live.create(admin_key, policy=key), lambda esc: sla_ms(esc) != sla_ms(first))
    assert (sla_ms(first), sla_ms(second)) == (15 * 60_000, 2 * 3600_000)
    assert live.api.get(f"/escalations/{first['id']}", token=admin_key).json()["deadlineAt"] == first["deadlineAt"]


def test_policy_deleted_via_cli_is_unknown_to_a_running_server(runner, live, admin_key):
    key = unique("gone") + ".policy"
    run(runner, live.db, "policy", "set", key)
    live.create(admin_key, policy=key)
    run(runner, live.db, "policy", "delete", key)
    resp = within_config_bound(
        lambda: live.api.post("/escalations", token=admin_key, json_body=escalation_body(policy=key)),
        lambda r: r.status != 201,
    )
    resp.problem(422, "unknown_policy")


def test_policy_in_an_unknown_workspace_fails_cleanly(runner, tmp_path):
    fails_cleanly(run(runner, tmp_path / "p.db", "policy", "set", "a.b", "--workspace", "nowhere", ok=False), "nowhere")
