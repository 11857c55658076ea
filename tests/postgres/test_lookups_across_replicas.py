"""Keys, users and policies cached per replica: a change made anywhere is
seen everywhere within 1 s (docs/CONTRACT.md, #14), through the doorbell
and the real surface."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import psycopg
import pytest

from escalated.domain.policies import build_policy
from escalated.store.postgres.doorbell import Doorbell
from escalated.store.postgres.lookups import TTL_S, Lookups
from escalated.store.postgres.store import PostgresStore
from escalated.store.postgres.writer import PgWriter
from tests.support.api import Api
from tests.support.server import ServerProcess, cli
from tests.support.wait import eventually

pytestmark = pytest.mark.postgres


@pytest.fixture
async def two(postgres_server):
    url = postgres_server.create_database(migrated=False)
    replicas = [ServerProcess(db=url).start(), ServerProcess(db=url).start()]
    await asyncio.to_thread(cli, url, "policy", "set", "refunds.large")
    async with aiohttp.ClientSession() as session:
        key = next(r.bootstrap_key for r in replicas if r.bootstrap_key)
        yield url, [Api(r.url, key, session) for r in replicas]
    for replica in replicas:
        replica.stop()
    postgres_server.drop_database(url)


async def seconds_until(predicate, *, bound_s: float) -> float:
    """How long until ``predicate()`` holds; fails past ``bound_s`` (plus slack for a busy machine)."""
    started = time.monotonic()
    await eventually(predicate, timeout_s=bound_s + 5, interval_s=0.01)
    return time.monotonic() - started


async def test_a_key_revoked_on_one_replica_is_refused_on_the_other_within_1_s(two):
    _, (a, b) = two
    status, minted, _ = await a.call("POST", "/api-keys", json={"name": "agent"})
    assert status == 201
    on_b = Api(b.url, minted["key"], b.session)
    assert (await on_b.call("GET", "/escalations"))[0] == 200  # B now holds the key
    assert (await a.call("DELETE", f"/api-keys/{minted['id']}"))[0] == 204

    async def refused() -> bool:
        return (await on_b.call("GET", "/escalations"))[0] == 401

    assert await seconds_until(refused, bound_s=TTL_S) < TTL_S


async def test_a_key_revoked_behind_the_doorbells_back_is_refused_within_1_s_all_the_same(two):
    """The bound holds when the notification is lost: revoked by a bare
    ``UPDATE`` on a connection of its own (no writer, so no ``pg_notify``),
    the key B holds is used for at most ``TTL_S`` counted from the read that
    filled B's entry."""
    url, (a, b) = two
    status, minted, _ = await a.call("POST", "/api-keys", json={"name": "agent"})
    assert status == 201
    on_b = Api(b.url, minted["key"], b.session)
    assert (await on_b.call("GET", "/escalations"))[0] == 200  # B now holds the key
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("UPDATE api_keys SET revoked_ms = %s WHERE id = %s", (int(time.time() * 1000), minted["id"]))

    async def refused() -> bool:
        return (await on_b.call("GET", "/escalations"))[0] == 401

    # Slack for the polling request itself on a busy machine; a cache that
    # kept its entries until a notification came would never get here.
    assert await seconds_until(refused, bound_s=TTL_S) < TTL_S + 0.5


async def test_a_policy_changed_with_the_cli_applies_on_every_replica_within_1_s(two):
    url, apis = two
    for api in apis:
        assert (await api.create())["deadlineAt"] is None  # each holds the policy without an SLA
    await asyncio.to_thread(cli, url, "policy", "set", "refunds.large", "--sla", "1h", "--default-choice", "deny")

    async def sla_everywhere() -> bool:
        return all([(await api.create())["deadlineAt"] is not None for api in apis])

    assert await seconds_until(sla_everywhere, bound_s=TTL_S) < TTL_S


async def _doorbell_forgetting(url: str, lookups: Lookups, stop: asyncio.Event) -> asyncio.Task:
    bell = Doorbell(url, on_ring=lambda: None, on_config=lookups.forget)
    task = asyncio.create_task(bell.run(stop))
    await asyncio.wait_for(bell.listening.wait(), 5)
    return task


async def _cache(lookups: Lookups) -> None:
    async def read() -> str:
        return "the key as read before"

    await lookups.get("k", read)


async def _still_cached(lookups: Lookups) -> bool:
    async def read() -> str:
        return "read again"

    return await lookups.get("k", read) == "the key as read before"


async def test_a_config_change_committed_by_another_replica_empties_the_cache_through_the_doorbell(postgres_url):
    stop = asyncio.Event()
    lookups = Lookups(ttl_s=600)  # only the doorbell can empty it within this test
    task = await _doorbell_forgetting(postgres_url, lookups, stop)
    await _cache(lookups)
    other = await PgWriter(postgres_url).start()

    async def revoke_all(tx) -> None:
        tx.config_changed = True
        await tx.execute("UPDATE api_keys SET revoked_ms = 1")

    await other.submit(revoke_all)

    async def emptied() -> bool:
        return not await _still_cached(lookups)

    await seconds_until(emptied, bound_s=1.0)
    await other.close()
    stop.set()
    await task


async def test_an_escalation_committed_by_another_replica_keeps_the_cache(postgres_url):
    stop = asyncio.Event()
    lookups = Lookups(ttl_s=600)
    rang = asyncio.Event()
    bell = Doorbell(postgres_url, on_ring=rang.set, on_config=lookups.forget)
    task = asyncio.create_task(bell.run(stop))
    await asyncio.wait_for(bell.listening.wait(), 5)
    await _cache(lookups)
    rang.clear()
    other = await PgWriter(postgres_url).start()

    async def touch(tx) -> None:
        await tx.execute("UPDATE workspaces SET created_ms = created_ms + 1")

    await other.submit(touch)
    await asyncio.wait_for(rang.wait(), 1.0)  # heard, and yet:
    assert await _still_cached(lookups)
    await other.close()
    stop.set()
    await task


# Every admin write to keys, users or policies, as replica A makes it; the
# set-up writes commit before replica B listens, so only the write counts.
async def _set_up_nothing(store, workspace_id: str) -> None:
    pass


async def _add_key(store, workspace_id: str) -> None:
    await store.add_api_key(workspace_id=workspace_id, token_hash="h-key", name="a", scopes=frozenset(), expires_ms=None)


async def _add_first_key(store, workspace_id: str) -> None:
    info = await store.add_first_api_key(
        workspace_id=workspace_id, token_hash="h-first", name="bootstrap", scopes=frozenset(), before_commit=lambda: None
    )
    assert info is not None


async def _revoke_key(store, workspace_id: str) -> None:
    (key,) = await store.api_keys(workspace_id=workspace_id)
    await store.revoke_api_key(key_id=key.id, workspace_id=workspace_id)


async def _put_policy(store, workspace_id: str) -> None:
    await store.put_policy(policy=build_policy(workspace_id, "refunds.large"))


async def _put_policies(store, workspace_id: str) -> None:
    await store.put_policies(workspace_id=workspace_id, policies=[build_policy(workspace_id, "a.b")], prune=True)


async def _delete_policy(store, workspace_id: str) -> None:
    assert await store.delete_policy(workspace_id=workspace_id, key="refunds.large")


async def _add_user(store, workspace_id: str) -> None:
    await store.add_user(workspace_id=workspace_id, name="bob", role="reviewer", groups=(), token_hash="h-bob")


async def _rotate_user_token(store, workspace_id: str) -> None:
    await store.rotate_user_token(workspace_id=workspace_id, name="bob", token_hash="h-bob-2")


CONFIG_WRITES = {
    "add_api_key": (_set_up_nothing, _add_key),
    "add_first_api_key": (_set_up_nothing, _add_first_key),
    "revoke_api_key": (_add_key, _revoke_key),
    "put_policy": (_set_up_nothing, _put_policy),
    "put_policies": (_set_up_nothing, _put_policies),
    "delete_policy": (_put_policy, _delete_policy),
    "add_user": (_set_up_nothing, _add_user),
    "rotate_user_token": (_add_user, _rotate_user_token),
}


@pytest.mark.parametrize("write", list(CONFIG_WRITES))
async def test_each_admin_write_to_keys_users_or_policies_empties_the_other_replicas_cache(postgres_url, write):
    set_up, change = CONFIG_WRITES[write]
    store = await PostgresStore.open(postgres_url)
    workspace_id = (await store.workspace_by_name(name="default")).id
    await set_up(store, workspace_id)
    stop = asyncio.Event()
    lookups = Lookups(ttl_s=600)  # the other replica's: only its doorbell can empty it within this test
    task = await _doorbell_forgetting(postgres_url, lookups, stop)
    await _cache(lookups)
    await change(store, workspace_id)

    async def emptied() -> bool:
        return not await _still_cached(lookups)

    try:
        await seconds_until(emptied, bound_s=1.0)
    finally:
        await store.close()
        stop.set()
        await task
