"""The per-replica cache of keys, users and policies (store/postgres/lookups.py).

Pure asyncio: no database is needed to pin its rules (the PostgreSQL tests
check it across real replicas)."""

from __future__ import annotations

import asyncio
import time

from escalated.store.postgres.lookups import Lookups


class Reads:
    """A stand-in for the database read: counts calls, answers ``value``."""

    def __init__(self, value) -> None:
        self.value = value
        self.count = 0

    async def __call__(self):
        self.count += 1
        return self.value


async def test_a_second_look_up_within_the_ttl_does_not_read_again():
    lookups, read = Lookups(ttl_s=60), Reads("key-row")
    assert [await lookups.get("k", read), await lookups.get("k", read)] == ["key-row", "key-row"]
    assert read.count == 1


async def test_a_miss_is_read_again_so_a_row_created_elsewhere_is_seen_at_once():
    lookups, read = Lookups(ttl_s=60), Reads(None)
    await lookups.get("k", read)
    read.value = "created-on-another-replica"
    assert await lookups.get("k", read) == "created-on-another-replica"


async def test_forget_makes_the_next_look_up_read_the_database():
    lookups, read = Lookups(ttl_s=60), Reads("before")
    await lookups.get("k", read)
    read.value = "revoked"
    lookups.forget()
    assert await lookups.get("k", read) == "revoked"


async def test_an_entry_older_than_the_ttl_is_read_again():
    lookups, read = Lookups(ttl_s=0.05), Reads("before")
    await lookups.get("k", read)
    read.value = "after"
    time.sleep(0.06)  # monotonic time moves on: the entry's age is past the ttl, not a race
    assert await lookups.get("k", read) == "after"


async def test_a_read_in_flight_when_the_cache_is_forgotten_is_not_kept():
    lookups = Lookups(ttl_s=60)
    release = asyncio.Event()

    async def slow_stale_read():
        await release.wait()
        return "read-before-the-revocation"

    in_flight = asyncio.create_task(lookups.get("k", slow_stale_read))
    await asyncio.sleep(0)  # the read has started
    lookups.forget()  # the revocation's notification arrives meanwhile
    release.set()
    assert await in_flight == "read-before-the-revocation"
    assert await lookups.get("k", Reads("revoked")) == "revoked"


async def test_a_full_cache_starts_again_instead_of_growing():
    lookups = Lookups(ttl_s=60, max_entries=2)
    for name in ("a", "b", "c"):
        await lookups.get(name, Reads(name))
    read = Reads("a-again")
    assert await lookups.get("a", read) == "a-again" and read.count == 1


async def test_concurrent_look_ups_of_one_key_share_one_read():
    lookups, release, reads = Lookups(ttl_s=60), asyncio.Event(), []

    async def read():
        reads.append(1)
        await release.wait()
        return "row"

    waiting = [asyncio.create_task(lookups.get("k", read)) for _ in range(48)]
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.gather(*waiting) == ["row"] * 48
    assert len(reads) == 1
