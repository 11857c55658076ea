"""Store conformance: workspaces, API keys, users and policies: what the
admin commands write and every request reads (by the hash of a token,
never the token). Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from escalated.domain.models import Level, Policy, ReviewRules
from escalated.errors import ConfigError, NotFound

SCOPES = frozenset({"escalations:write", "escalations:read"})


# -- workspaces -------------------------------------------------------------------


async def test_a_created_workspace_is_found_by_name_and_listed_by_name(store, ws):
    made = await store.create_workspace(name="acme")
    assert await store.workspace_by_name(name="acme") == made
    assert [w.name for w in await store.workspaces()] == ["acme", "default"]


async def test_a_taken_workspace_name_is_refused(store, ws):
    with pytest.raises(ConfigError):
        await store.create_workspace(name="default")


async def test_an_unknown_workspace_name_is_refused(store, ws):
    with pytest.raises(ConfigError):
        await store.workspace_by_name(name="nowhere")


# -- API keys ---------------------------------------------------------------------------


async def add_key(store, ws, token_hash="hash-1", **fields):
    args = {"name": "ci", "scopes": SCOPES, "expires_ms": None, **fields}
    return await store.add_api_key(workspace_id=ws, token_hash=token_hash, **args)


async def test_a_key_is_read_by_the_hash_of_its_token_and_by_its_id(store, ws):
    key = await add_key(store, ws, expires_ms=99_000)
    assert (key.name, key.scopes, key.expires_ms, key.revoked_ms) == ("ci", SCOPES, 99_000, None)
    assert await store.api_key_by_hash(token_hash="hash-1") == key
    assert await store.api_key(key_id=key.id, workspace_id=ws) == key
    assert await store.api_key_by_hash(token_hash="hash-2") is None


async def test_a_key_is_not_read_by_id_from_another_workspace(store, ws):
    other = (await store.create_workspace(name="other")).id
    key = await add_key(store, ws)
    assert await store.api_key(key_id=key.id, workspace_id=other) is None


async def test_api_keys_lists_a_workspace_or_all_in_id_order(store, ws):
    other = (await store.create_workspace(name="other")).id
    a, b = await add_key(store, ws, "h-a"), await add_key(store, other, "h-b")
    assert [k.id for k in await store.api_keys(workspace_id=ws)] == [a.id]
    assert [k.id for k in await store.api_keys(workspace_id=None)] == sorted([a.id, b.id])


async def test_a_revoked_key_reads_back_revoked_at_once(store, ws):
    key = await add_key(store, ws)
    await store.api_key_by_hash(token_hash="hash-1")  # read once: a store that keeps it must forget it
    await store.revoke_api_key(key_id=key.id, workspace_id=ws)
    assert (await store.api_key_by_hash(token_hash="hash-1")).revoked_ms is not None


async def test_a_kept_key_is_the_row_read_and_never_outlives_a_revocation(store, ws):
    key = await add_key(store, ws)
    read = await store.api_key_by_hash(token_hash="hash-1")
    assert store.kept_api_key(token_hash="hash-1") is read  # no read, no wait
    assert store.kept_api_key(token_hash="hash-2") is None
    await store.revoke_api_key(key_id=key.id, workspace_id=ws)
    kept = store.kept_api_key(token_hash="hash-1")
    assert kept is None or kept.revoked_ms is not None  # "not known", or the revoked row: never the live one


async def test_revoking_a_key_no_workspace_has_is_not_found(store, ws):
    with pytest.raises(NotFound):
        await store.revoke_api_key(key_id="key_missing", workspace_id=None)
    with pytest.raises(NotFound):
        await store.revoke_api_key(key_id="key_missing", workspace_id=ws)


async def test_revoking_through_another_workspace_leaves_the_key_alone(store, ws):
    # Not NotFound: the interface refuses only a key no workspace has, and
    # AdminService reads the key in the caller's workspace before revoking.
    other = (await store.create_workspace(name="other")).id
    key = await add_key(store, ws)
    await store.revoke_api_key(key_id=key.id, workspace_id=other)
    assert (await store.api_key(key_id=key.id, workspace_id=ws)).revoked_ms is None


async def test_revoking_with_no_workspace_revokes_whichever_has_it(store, ws):
    key = await add_key(store, ws)
    await store.revoke_api_key(key_id=key.id, workspace_id=None)
    assert (await store.api_key(key_id=key.id, workspace_id=ws)).revoked_ms is not None


async def test_the_first_key_is_added_once_calling_before_commit(store, ws):
    calls = []
    first = await store.add_first_api_key(workspace_id=ws, token_hash="h-1", name="first", scopes=SCOPES, before_commit=lambda: calls.append(1))
    second = await store.add_first_api_key(workspace_id=ws, token_hash="h-2", name="first", scopes=SCOPES, before_commit=lambda: calls.append(2))
    assert first is not None and second is None and calls == [1]
    assert [k.id for k in await store.api_keys(workspace_id=ws)] == [first.id]


async def test_a_first_key_whose_before_commit_fails_is_not_stored(store, ws):
    def fail() -> None:
        raise OSError("could not write the token file")

    with pytest.raises(OSError):
        await store.add_first_api_key(workspace_id=ws, token_hash="h-1", name="first", scopes=SCOPES, before_commit=fail)
    assert await store.api_keys(workspace_id=ws) == []


# -- users --------------------------------------------------------------------------------


async def add_user(store, ws, name="ann", token_hash="u-ann", **fields):
    args = {"role": "reviewer", "groups": ("ops",), **fields}
    return await store.add_user(workspace_id=ws, name=name, token_hash=token_hash, **args)


async def test_a_user_is_read_by_the_hash_of_its_token_and_listed(store, ws):
    user = await add_user(store, ws, email="ann@example.com", slack_id="U123")
    assert (user.name, user.role, user.groups, user.email, user.slack_id) == ("ann", "reviewer", ("ops",), "ann@example.com", "U123")
    assert await store.user_by_hash(token_hash="u-ann") == user
    assert await store.users(workspace_id=ws) == [user]


async def test_a_user_is_found_by_email_and_by_slack_id_in_its_workspace(store, ws):
    other = (await store.create_workspace(name="other")).id
    user = await add_user(store, ws, email="ann@example.com", slack_id="U123")
    assert await store.user_by_email(workspace_id=ws, email="ann@example.com") == user
    assert await store.user_by_slack_id(workspace_id=ws, slack_id="U123") == user
    assert await store.user_by_email(workspace_id=other, email="ann@example.com") is None


@pytest.mark.parametrize("taken", ["name", "email", "slack_id"])
async def test_a_name_email_or_slack_id_taken_in_the_workspace_is_refused(store, ws, taken):
    await add_user(store, ws, email="ann@example.com", slack_id="U123")
    clash = {"name": "bob", "email": "bob@example.com", "slack_id": "U456"}
    clash[taken] = {"name": "ann", "email": "ann@example.com", "slack_id": "U123"}[taken]
    with pytest.raises(ConfigError):
        await add_user(store, ws, token_hash="u-bob", **clash)
    assert [u.name for u in await store.users(workspace_id=ws)] == ["ann"]


async def test_the_same_name_in_another_workspace_is_a_different_user(store, ws):
    other = (await store.create_workspace(name="other")).id
    await add_user(store, ws)
    assert (await add_user(store, other, token_hash="u-ann-2")).workspace_id == other


async def test_rotating_a_users_token_replaces_the_hash_at_once(store, ws):
    user = await add_user(store, ws)
    await store.user_by_hash(token_hash="u-ann")  # read once: a store that keeps it must forget it
    await store.rotate_user_token(workspace_id=ws, name="ann", token_hash="u-ann-new")
    assert await store.user_by_hash(token_hash="u-ann") is None
    assert (await store.user_by_hash(token_hash="u-ann-new")).id == user.id


async def test_rotating_the_token_of_no_such_user_is_refused(store, ws):
    with pytest.raises(ConfigError):
        await store.rotate_user_token(workspace_id=ws, name="nobody", token_hash="x")


# -- policies ------------------------------------------------------------------------------


def policy(ws: str, key: str = "refunds.large", **fields) -> Policy:
    return Policy(workspace_id=ws, key=key, **{"reviewers": ("group:ops",), "sla_s": 60.0, **fields})


async def test_a_policy_reads_back_whole(store, ws):
    p = policy(
        ws, notify=("email:ops@example.com",), default_choice="deny", cancel_callback=True,
        review=ReviewRules(remind_every_s=30.0, levels=(Level(after_s=120.0, reviewers=("group:leads",)),), quorum=2),
    )  # fmt: skip
    await store.put_policy(policy=p)
    assert await store.policy(workspace_id=ws, key="refunds.large") == p
    assert await store.policies(workspace_id=ws) == [p]


async def test_put_policy_replaces_and_is_seen_at_once(store, ws):
    await store.put_policy(policy=policy(ws))
    await store.policy(workspace_id=ws, key="refunds.large")  # read once: a store that keeps it must forget it
    await store.put_policy(policy=policy(ws, sla_s=5.0))
    assert (await store.policy(workspace_id=ws, key="refunds.large")).sla_s == 5.0


async def test_a_kept_policy_is_the_one_read_and_never_outlives_a_change(store, ws):
    await store.put_policy(policy=policy(ws))
    read = await store.policy(workspace_id=ws, key="refunds.large")
    assert store.kept_policy(workspace_id=ws, key="refunds.large") is read
    assert store.kept_policy(workspace_id=ws, key="other") is None
    await store.put_policy(policy=policy(ws, sla_s=5.0))
    kept = store.kept_policy(workspace_id=ws, key="refunds.large")
    assert kept is None or kept.sla_s == 5.0
    await store.delete_policy(workspace_id=ws, key="refunds.large")
    assert store.kept_policy(workspace_id=ws, key="refunds.large") is None


async def test_put_policies_with_prune_deletes_the_others_and_names_them(store, ws):
    await store.put_policy(policy=policy(ws, "a"))
    await store.put_policy(policy=policy(ws, "b"))
    deleted = await store.put_policies(workspace_id=ws, policies=[policy(ws, "b", sla_s=1.0), policy(ws, "c")], prune=True)
    assert deleted == ["a"]
    assert [(p.key, p.sla_s) for p in await store.policies(workspace_id=ws)] == [("b", 1.0), ("c", 60.0)]


async def test_put_policies_without_prune_keeps_the_others(store, ws):
    await store.put_policy(policy=policy(ws, "a"))
    assert await store.put_policies(workspace_id=ws, policies=[policy(ws, "b")], prune=False) == []
    assert [p.key for p in await store.policies(workspace_id=ws)] == ["a", "b"]


async def test_delete_policy_once_then_false_and_gone_at_once(store, ws):
    await store.put_policy(policy=policy(ws))
    await store.policy(workspace_id=ws, key="refunds.large")
    assert await store.delete_policy(workspace_id=ws, key="refunds.large") is True
    assert await store.delete_policy(workspace_id=ws, key="refunds.large") is False
    assert await store.policy(workspace_id=ws, key="refunds.large") is None
