"""Keys, users, policies and active rules kept by the SQLite store until the
database changes (store/sqlite/untilchanged.py): a change committed through any
connection, this server's or another process's (the CLI opens its own), is
seen by the next look-up, as when every look-up read the row.

Two stores on one real file: ``server`` stands for ``serve``, ``cli`` for
a CLI command run beside it."""

from __future__ import annotations

import asyncio

import pytest

from escalated.core.admin import AdminService
from escalated.domain import tokens
from escalated.domain.ids import new_id
from escalated.domain.models import DEFAULT_WORKSPACE, Policy
from escalated.domain.rules import Rule, RuleMatch
from escalated.errors import Unauthenticated
from escalated.store.sqlite import SqliteStore
from escalated.store.sqlite.untilchanged import UntilChanged
from escalated.timeutil import now_ms


@pytest.fixture
async def two_stores(tmp_path):
    path = tmp_path / "escalated.db"
    server = await SqliteStore.open(path)
    cli = await SqliteStore.open(path)
    workspace = await server.workspace_by_name(name=DEFAULT_WORKSPACE)
    yield server, cli, workspace.id
    await cli.close()
    await server.close()


async def test_a_key_revoked_by_another_process_is_refused_by_the_next_request(two_stores):
    server, cli, ws = two_stores
    token = tokens.mint(tokens.API_KEY_PREFIX)
    key = await cli.add_api_key(
        workspace_id=ws, token_hash=tokens.hash_token(token), name="k", scopes=frozenset({"escalations:read"}), expires_ms=None
    )
    admin = AdminService(server)
    assert (await admin.principal_for(token)).id == key.id  # kept by the server now
    await cli.revoke_api_key(key_id=key.id, workspace_id=ws)
    with pytest.raises(Unauthenticated):
        await admin.principal_for(token)


async def test_a_key_revoked_by_another_process_is_no_longer_known_without_a_read(two_stores):
    server, cli, ws = two_stores
    token = tokens.mint(tokens.API_KEY_PREFIX)
    key = await cli.add_api_key(
        workspace_id=ws, token_hash=tokens.hash_token(token), name="k", scopes=frozenset({"escalations:read"}), expires_ms=None
    )
    admin = AdminService(server)
    assert admin.kept_principal(token) is None  # not read yet: principal_for reads it
    principal = await admin.principal_for(token)
    assert admin.kept_principal(token) is principal  # kept, and its principal built once
    await cli.revoke_api_key(key_id=key.id, workspace_id=ws)
    assert admin.kept_principal(token) is None
    with pytest.raises(Unauthenticated):
        await admin.principal_for(token)


async def test_an_expired_key_is_not_known_without_a_read(two_stores):
    server, cli, ws = two_stores
    token = tokens.mint(tokens.API_KEY_PREFIX)
    expires_ms = now_ms() + 60_000
    await cli.add_api_key(
        workspace_id=ws, token_hash=tokens.hash_token(token), name="k", scopes=frozenset({"escalations:read"}),
        expires_ms=expires_ms,
    )  # fmt: skip
    clock = [expires_ms - 1]
    admin = AdminService(server, clock=lambda: clock[0])
    await admin.principal_for(token)
    assert admin.kept_principal(token) is not None
    clock[0] = expires_ms
    assert admin.kept_principal(token) is None
    with pytest.raises(Unauthenticated):
        await admin.principal_for(token)


async def test_a_rotated_user_token_is_refused_and_the_new_one_taken_at_once(two_stores):
    server, cli, ws = two_stores
    old, new = tokens.mint(tokens.USER_TOKEN_PREFIX), tokens.mint(tokens.USER_TOKEN_PREFIX)
    await cli.add_user(workspace_id=ws, name="rita", role="reviewer", groups=(), token_hash=tokens.hash_token(old))
    admin = AdminService(server)
    assert (await admin.principal_for(old)).name == "rita"
    with pytest.raises(Unauthenticated):
        await admin.principal_for(new)  # an absence is kept too, until the next change
    await cli.rotate_user_token(workspace_id=ws, name="rita", token_hash=tokens.hash_token(new))
    assert (await admin.principal_for(new)).name == "rita"
    with pytest.raises(Unauthenticated):
        await admin.principal_for(old)


async def test_a_policy_set_or_deleted_elsewhere_applies_to_the_next_look_up(two_stores):
    server, cli, ws = two_stores
    assert await server.policy(workspace_id=ws, key="refunds") is None
    await cli.put_policy(policy=Policy(workspace_id=ws, key="refunds", sla_s=60, default_choice="deny"))
    assert (await server.policy(workspace_id=ws, key="refunds")).sla_s == 60
    await cli.put_policy(policy=Policy(workspace_id=ws, key="refunds", sla_s=120, default_choice="deny"))
    assert (await server.policy(workspace_id=ws, key="refunds")).sla_s == 120
    assert await cli.delete_policy(workspace_id=ws, key="refunds")
    assert await server.policy(workspace_id=ws, key="refunds") is None


def _rule(ws: str, *, expires_ms: int) -> Rule:
    return Rule(
        id=new_id("rule"), workspace_id=ws, policy="refunds", choice="approve", match=RuleMatch(),
        reason="known customer", created_by="rita", created_ms=now_ms(), expires_ms=expires_ms,
    )  # fmt: skip


async def test_active_rules_follow_additions_revocations_and_time(two_stores):
    server, cli, ws = two_stores
    at = now_ms()
    assert await server.active_rules(workspace_id=ws, policy="refunds", at_ms=at) == []
    rule = _rule(ws, expires_ms=at + 60_000)
    await cli.add_rule(rule=rule)
    assert [r.id for r in await server.active_rules(workspace_id=ws, policy="refunds", at_ms=at)] == [rule.id]
    # kept, and still asked about time: expired later, active earlier
    assert await server.active_rules(workspace_id=ws, policy="refunds", at_ms=at + 60_000) == []
    assert [r.id for r in await server.active_rules(workspace_id=ws, policy="refunds", at_ms=at - 1)] == [rule.id]
    assert await cli.revoke_rule(rule_id=rule.id, workspace_id=ws, by="rita", at_ms=at)
    assert await server.active_rules(workspace_id=ws, policy="refunds", at_ms=at) == []


async def test_no_rules_is_known_without_a_read_until_one_is_added(two_stores):
    server, cli, ws = two_stores
    at = now_ms()
    assert not server.kept_no_rules(workspace_id=ws, policy="refunds", at_ms=at)  # not read yet
    assert await server.active_rules(workspace_id=ws, policy="refunds", at_ms=at) == []
    assert server.kept_no_rules(workspace_id=ws, policy="refunds", at_ms=at)
    assert not server.kept_no_rules(workspace_id=ws, policy="refunds", at_ms=at - 1)  # before the kept read
    rule = _rule(ws, expires_ms=at + 60_000)
    await cli.add_rule(rule=rule)
    assert not server.kept_no_rules(workspace_id=ws, policy="refunds", at_ms=at)
    await server.active_rules(workspace_id=ws, policy="refunds", at_ms=at)
    assert not server.kept_no_rules(workspace_id=ws, policy="refunds", at_ms=at)  # one is active
    assert server.kept_no_rules(workspace_id=ws, policy="refunds", at_ms=at + 60_000)  # expired by then


async def test_its_own_writes_apply_to_its_next_look_up(two_stores):
    server, _, ws = two_stores
    await server.put_policy(policy=Policy(workspace_id=ws, key="refunds", sla_s=60, default_choice="deny"))
    assert (await server.policy(workspace_id=ws, key="refunds")).sla_s == 60
    await server.put_policy(policy=Policy(workspace_id=ws, key="refunds", sla_s=90, default_choice="deny"))
    assert (await server.policy(workspace_id=ws, key="refunds")).sla_s == 90


class Versions:
    """The database's data version as a test sets it, counting how often it was asked."""

    def __init__(self) -> None:
        self.value = 1
        self.asked = 0

    def __call__(self) -> int:
        self.asked += 1
        return self.value


async def test_kept_until_the_version_moves_and_asked_once_per_loop_turn():
    versions, reads = Versions(), []
    kept = UntilChanged(versions)

    def read():
        reads.append(1)
        return None  # an absent row is kept like any other answer

    assert [kept.get("k", read), kept.get("k", read)] == [None, None]
    assert (len(reads), versions.asked) == (1, 1)  # one ask serves this turn's look-ups
    await asyncio.sleep(0)  # the next turn asks again
    kept.get("k", read)
    assert (len(reads), versions.asked) == (1, 2)
    versions.value = 2
    await asyncio.sleep(0)
    kept.get("k", read)
    assert len(reads) == 2


async def test_everything_is_forgotten_at_the_bound():
    kept, reads = UntilChanged(Versions(), max_entries=2), []
    for key in ("a", "b", "c", "a"):
        kept.get(key, lambda k=key: reads.append(k))
    assert reads == ["a", "b", "c", "a"]  # "c" found the cache full: "a" went with the rest
