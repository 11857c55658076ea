"""Sender claims: a claim held in an open transaction is skipped, not waited for.
The store's statements (claim_deliveries, defer_deliveries), run on
connections whose transactions the test holds open."""

from __future__ import annotations

import psycopg
import pytest

from escalated.store import queries
from escalated.store.postgres.writer import GroupTx

pytestmark = pytest.mark.postgres
LEASE_MS = 60_000
Q = queries.load("postgres")


async def claim(conn, ids: list[str], *, at_ms: int) -> dict[str, int]:
    """What WritesPart.claim_deliveries runs: the ids won, each with its token (the lease's end)."""
    token = at_ms + LEASE_MS
    rows = await GroupTx(conn).all(Q["claim_deliveries"], {"token": token, "ids": ids, "at_ms": at_ms})
    return {row[0]: token for row in rows}


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
    mine = await claim(a, ids[:7], at_ms=1_000)
    # returns at once, without them
    theirs = await claim(b, ids, at_ms=1_000)
    await a.execute("COMMIT")
    await b.execute("COMMIT")
    # every lease still runs
    late = await claim(b, ids, at_ms=2_000)
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
    await GroupTx(conn).run(Q["defer_deliveries"], {"until_ms": 60_000, "ids": ids})
    claimed = await claim(conn, ids, at_ms=59_999)
    due = dict(await (await conn.execute("SELECT id, next_attempt_ms FROM deliveries")).fetchall())
    await conn.close()
    assert claimed == {}
    assert due == {ids[0]: 60_000, ids[1]: 60_000, ids[2]: 90_000}
