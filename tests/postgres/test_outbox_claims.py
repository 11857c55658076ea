"""Sender claims on PostgreSQL: two senders, lapsed leases, stale fencing tokens."""

from __future__ import annotations

import json

import psycopg
import pytest

from escalated.domain.models import DELIVERED, PENDING, Attempt
from escalated.store.postgres import outbox

pytestmark = pytest.mark.postgres
LEASE_MS = 60_000


async def connect(url: str) -> psycopg.AsyncConnection:
    return await psycopg.AsyncConnection.connect(url, autocommit=True)


async def add_deliveries(conn, count: int, *, due_ms: int = 0) -> list[str]:
    ids = [f"dlv_{i:03d}" for i in range(count)]
    for did in ids:
        await conn.execute(
            "INSERT INTO deliveries (id, escalation_id, kind, target, event, status, body, next_attempt_ms, created_ms)"
            " VALUES (%s, 'esc_1', 'callback', 'http://127.0.0.1:9/cb', 'resolved', 'pending', %s, %s, 0)",
            (did, b"{}", due_ms),
        )
    return ids


async def test_two_senders_claiming_at_once_take_disjoint_deliveries(postgres_url):
    a, b = await connect(postgres_url), await connect(postgres_url)
    ids = await add_deliveries(a, 10)
    await a.execute("BEGIN")
    await b.execute("BEGIN")
    mine = await outbox.claim(a, ids=ids[:7], now_ms=1000, lease_ms=LEASE_MS)  # uncommitted: rows locked
    theirs = await outbox.claim(b, ids=ids, now_ms=1000, lease_ms=LEASE_MS)  # skips the locked rows
    await a.execute("COMMIT")
    await b.execute("COMMIT")
    late = await outbox.claim(b, ids=ids, now_ms=2000, lease_ms=LEASE_MS)  # all leased now
    await a.close()
    await b.close()
    assert {c.delivery.id for c in mine} == set(ids[:7])
    assert {c.delivery.id for c in theirs} == set(ids[7:])
    assert late == []


async def test_a_lapsed_lease_is_claimed_again_with_a_newer_token(postgres_url):
    conn = await connect(postgres_url)
    (did,) = await add_deliveries(conn, 1)
    (first,) = await outbox.claim(conn, ids=[did], now_ms=1000, lease_ms=LEASE_MS)
    during = await outbox.claim(conn, ids=[did], now_ms=1000 + LEASE_MS - 1, lease_ms=LEASE_MS)
    (second,) = await outbox.claim(conn, ids=[did], now_ms=1000 + LEASE_MS, lease_ms=LEASE_MS)
    await conn.close()
    assert during == []
    assert second.token > first.token


async def test_a_stale_fencing_token_cannot_record_over_a_newer_claim(postgres_url):
    conn = await connect(postgres_url)
    (did,) = await add_deliveries(conn, 1)
    (stale,) = await outbox.claim(conn, ids=[did], now_ms=1000, lease_ms=LEASE_MS)
    (fresh,) = await outbox.claim(conn, ids=[did], now_ms=2000 + LEASE_MS, lease_ms=LEASE_MS)
    late = Attempt(at_ms=1500, duration_ms=10, status_code=500)
    ok = Attempt(at_ms=2500 + LEASE_MS, duration_ms=10, status_code=200)
    refused = await outbox.record_attempt(conn, claim=stale, attempt=late, status=PENDING, next_attempt_ms=9_999_999)
    recorded = await outbox.record_attempt(conn, claim=fresh, attempt=ok, status=DELIVERED, next_attempt_ms=None)
    final = await (await conn.execute("SELECT status, attempts_json FROM deliveries WHERE id = %s", (did,))).fetchone()
    await conn.close()
    assert (refused, recorded) == (False, True)
    assert final[0] == DELIVERED
    assert [a["statusCode"] for a in json.loads(final[1])] == [200]


async def test_a_failed_attempt_recorded_under_its_claim_schedules_the_retry(postgres_url):
    conn = await connect(postgres_url)
    (did,) = await add_deliveries(conn, 1)
    (claimed,) = await outbox.claim(conn, ids=[did], now_ms=1000, lease_ms=LEASE_MS)
    attempt = Attempt(at_ms=1000, duration_ms=5, error="connection refused")
    assert await outbox.record_attempt(conn, claim=claimed, attempt=attempt, status=PENDING, next_attempt_ms=6000)
    (head,) = await outbox.pending_head(conn, limit=5)
    await conn.close()
    assert head.next_attempt_ms == 6000
    assert head.attempts == (attempt,)
