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
