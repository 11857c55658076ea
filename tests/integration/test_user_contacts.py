"""Issue #16's base: a user's email and Slack id, set by ``users add``, shown
by ``users list`` and found by the core's look-ups, on both backends.

The real CLI (CliRunner on ``escalated.cli:main``) on a real SQLite file or
the real PostgreSQL server; the look-ups through ``AdminService`` over the
store ``serve`` would open.
"""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from escalated.cli import main
from escalated.core.admin import AdminService
from escalated.core.stores import open_store
from escalated.core.settings import PostgresUrl, Settings


def cli(db, *args, ok=True):
    result = CliRunner().invoke(main, [*args[:2], "--db", str(db), *args[2:]])
    if ok:
        assert result.exit_code == 0, (args, result.output, result.exception)
    else:
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    return result


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "escalated.db"
    return request.getfixturevalue("postgres_url")


def lookup(db, method: str, value: str, *, workspace: str = "default"):
    """The core's look-up (``AdminService.user_by_email`` / ``user_by_slack_id``), run to completion."""

    async def main():
        store = await open_store(Settings(db_path=PostgresUrl(db) if isinstance(db, str) else db))
        try:
            ws = await store.workspace_by_name(name=workspace)
            return await getattr(AdminService(store), method)(workspace_id=ws.id, **{method.removeprefix("user_by_"): value})
        finally:
            await store.close()

    return asyncio.run(main())


def test_users_list_shows_email_and_slack_id(tmp_path):
    db = tmp_path / "escalated.db"
    cli(db, "users", "add", "alice", "--email", "Alice@Example.com", "--slack-id", "U012AB3CD")
    cli(db, "users", "add", "bob")
    listed = cli(db, "users", "list").stdout.splitlines()
    assert listed == ["alice\treviewer\t-\talice@example.com\tU012AB3CD", "bob\treviewer\t-\t-\t-"]


def test_a_user_is_found_by_email_whatever_its_case(db):
    cli(db, "users", "add", "alice", "--email", "Alice@Example.COM")
    found = lookup(db, "user_by_email", "ALICE@example.com")
    assert (found.name, found.email) == ("alice", "alice@example.com")
    assert lookup(db, "user_by_email", "nobody@example.com") is None


def test_a_user_is_found_by_slack_id(db):
    cli(db, "users", "add", "alice", "--slack-id", "U012AB3CD")
    assert (lookup(db, "user_by_slack_id", "U012AB3CD")).name == "alice"
    assert lookup(db, "user_by_slack_id", "U999") is None


def test_an_email_names_one_user_per_workspace_in_any_case(db):
    cli(db, "users", "add", "alice", "--email", "ops@example.com")
    refused = cli(db, "users", "add", "bob", "--email", "OPS@example.com", ok=False)
    assert "ops@example.com already belongs to user 'alice'" in refused.stderr


def test_another_workspace_may_use_the_same_email(tmp_path):
    # `workspaces create` runs on SQLite only, for now.
    db = tmp_path / "escalated.db"
    cli(db, "users", "add", "alice", "--email", "ops@example.com")
    cli(db, "workspaces", "create", "team-b")
    cli(db, "users", "add", "bob", "-w", "team-b", "--email", "ops@example.com")
    assert (lookup(db, "user_by_email", "ops@example.com", workspace="team-b")).name == "bob"


def test_a_slack_id_names_one_user_per_workspace(db):
    cli(db, "users", "add", "alice", "--slack-id", "U012AB3CD")
    refused = cli(db, "users", "add", "bob", "--slack-id", "U012AB3CD", ok=False)
    assert "Slack id U012AB3CD already belongs to user 'alice'" in refused.stderr


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--email", "not-an-address", "not one plain address"),
        ("--email", "Alice <alice@example.com>", "not one plain address"),
        ("--email", "a@example.com,b@example.com", "not one plain address"),
        ("--slack-id", "alice", "not a Slack member id"),
        ("--slack-id", "u012ab3cd", "not a Slack member id"),
    ],
)
def test_a_malformed_contact_is_refused_with_its_reason(tmp_path, flag, value, words):
    db = tmp_path / "escalated.db"
    refused = cli(db, "users", "add", "alice", flag, value, ok=False)
    assert words in refused.stderr
    assert "alice" not in cli(db, "users", "list").stdout


def test_a_slack_notify_target_is_accepted(tmp_path):
    db = tmp_path / "escalated.db"
    cli(db, "policy", "set", "refunds", "--notify", "slack:https://hooks.slack.com/services/T0/B0/XYZsecret")
    assert "slack:https://hooks.slack.com/…cret" in cli(db, "policy", "list").stdout  # shown masked (CONTRACT §16)


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("slack:http://169.254.169.254/latest", "slack target 169.254.169.254 is a cloud metadata address"),
        ("slack:not a url", "slack target must not contain spaces"),
        ("pager:123", "use webhook:URL, slack:WEBHOOK_URL, email:ADDRESS or desktop"),
        ("email:someone", "email target: email 'someone' is not one plain address"),
    ],
)
def test_an_unusable_notify_target_is_refused(tmp_path, target, words):
    refused = cli(tmp_path / "escalated.db", "policy", "set", "refunds", "--notify", target, ok=False)
    assert words in refused.stderr
