"""Sender claims: a claim held in an open transaction is skipped, not waited for."""

from __future__ import annotations

import psycopg
import pytest

from escalated.store.postgres import jobs
from escalated.store.postgres.writer import GroupTx

pytestmark = pytest.mark.postgres
LEASE_MS = 60_000


async def add_deliveries(conn, count: int) -> list[str]:
    ids = [f"dlv_{i:03d}" for i in range(count)]
    for did in ids:
        await conn.execute(
            "INSERT INTO deliveries (id, escalation_id, kind, target, event, status, body, next_attempt_ms, created_ms)"
            " VALUES (%s, 'esc_1', 'callback', 'http://127.0.0.1:9/cb', 'resolved', 'pending', %s, 0, 0)",
            (did, b"{}"),
        )
    return ids


async def test_a_sender_claiming_while_another_claim_is_uncommitted_skips_those_rows(postgres_url):
    a = await psycopg.AsyncConnection.connect(postgres_url, autocommit=True)
    b = await psycopg.AsyncConnection.connect(postgres_url, autocommit=True)
    ids = await add_deliveries(a, 10)
    await a.execute("BEGIN")
    await b.execute("BEGIN")
    # uncommitted: rows locked
    mine = await jobs.claim_deliveries(GroupTx(a), delivery_ids=ids[:7], at_ms=1_000, lease_ms=LEASE_MS)
    # returns at once, without them
    theirs = await jobs.claim_deliveries(GroupTx(b), delivery_ids=ids, at_ms=1_000, lease_ms=LEASE_MS)
    await a.execute("COMMIT")
    await b.execute("COMMIT")
    # every lease still runs
    late = await jobs.claim_deliveries(GroupTx(b), delivery_ids=ids, at_ms=2_000, lease_ms=LEASE_MS)
    await a.close()
    await b.close()
    assert set(mine) == set(ids[:7])
    assert set(theirs) == set(ids[7:])
    assert late == {}


async def test_a_paused_receivers_deliveries_are_not_due_or_claimable_before_the_pause_ends(postgres_url):
    """``defer_deliveries`` (the sender's breaker) only ever moves a pending delivery later."""
    conn = await psycopg.AsyncConnection.connect(postgres_url, autocommit=True)
    ids = await add_deliveries(conn, 3)
    await conn.execute("UPDATE deliveries SET next_attempt_ms = 90000 WHERE id = %s", (ids[2],))
    await jobs.defer_deliveries(GroupTx(conn), delivery_ids=ids, until_ms=60_000)
    claimed = await jobs.claim_deliveries(GroupTx(conn), delivery_ids=ids, at_ms=59_999, lease_ms=LEASE_MS)
    due = dict(await (await conn.execute("SELECT id, next_attempt_ms FROM deliveries")).fetchall())
    await conn.close()
    assert claimed == {}
    assert due == {ids[0]: 60_000, ids[1]: 60_000, ids[2]: 90_000}
