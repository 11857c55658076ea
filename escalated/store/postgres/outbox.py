"""The outbox on PostgreSQL: every replica's sender claims before it sends.

A claim is a lease written into the row: ``next_attempt_ms`` moves to the
lease's end, so the delivery is not due for anyone else until the attempt
is recorded or the lease lapses (the claimer died). The value written is
also the claim's fencing token: an attempt is recorded only while
``next_attempt_ms`` still holds it, so a replica whose lease lapsed and
whose delivery another replica re-claimed cannot record over the newer
attempt. ``FOR UPDATE SKIP LOCKED`` lets two senders claiming at the same
moment each take different rows instead of queueing on each other.

At least once still holds: a claimer that dies mid-send leaves the row
pending, and it is sent again when the lease lapses. Never by two replicas
at the same time: a second claim needs the first lease to have lapsed,
and the lease outlasts an attempt's timeout.
"""

from __future__ import annotations

import attrs
import orjson
import psycopg

from escalated.domain.convert import converter
from escalated.domain.models import PENDING, Attempt, Delivery
from escalated.store import queries
from escalated.store.rows import delivery_from_row

Q = queries.load("postgres")


@attrs.frozen
class Claim:
    """A delivery this replica may attempt, and the token that proves it."""

    delivery: Delivery
    token: int  # the lease's end as this claim wrote it


async def pending_head(conn: psycopg.AsyncConnection, *, limit: int) -> list[Delivery]:
    """Pending deliveries in due order (claimed ones sort at their lease's end)."""
    cur = await conn.execute(Q["pending_deliveries"], (PENDING, limit))
    return [delivery_from_row(row) for row in await cur.fetchall()]


async def claim(conn: psycopg.AsyncConnection, *, ids: list[str], now_ms: int, lease_ms: int) -> list[Claim]:
    """Claim those of ``ids`` that are due and not claimed by a live lease."""
    lease_end_ms = now_ms + lease_ms
    cur = await conn.execute(Q["claim_deliveries"], {"ids": ids, "now_ms": now_ms, "lease_end_ms": lease_end_ms})
    return [Claim(delivery=delivery_from_row(row), token=lease_end_ms) for row in await cur.fetchall()]


async def record_attempt(
    conn: psycopg.AsyncConnection, *, claim: Claim, attempt: Attempt, status: str, next_attempt_ms: int | None
) -> bool:
    """Record an attempt made under ``claim``; False when the claim was fenced out."""
    cur = await conn.execute(
        Q["record_attempt"],
        {
            "attempt": orjson.dumps(converter.unstructure(attempt)).decode(),
            "status": status,
            "next_attempt_ms": next_attempt_ms if status == PENDING else None,
            "id": claim.delivery.id,
            "token": claim.token,
        },
    )
    return cur.rowcount == 1
