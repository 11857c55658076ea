"""Open escalations written straight into a SQLite file, far faster than HTTP.

The first row goes through the store's own job (``create_escalation``, the
one the writer runs for every HTTP create); every other row is a copy of it
made by SQL with its own id, run id, timestamps and deadline, so the rows
match the migrated schema by construction. Deadlines are written
relative (``deadline_ms`` = offset) and made absolute just before the server
starts (``arm_from``), so seeding time does not eat into them.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import attrs
from ulid import ULID

from escalated.domain.models import DEFAULT_WORKSPACE, OPEN, Choice, Content, Escalation, HistoryEntry, Resume, Subject
from escalated.store.sqlite import escalations as store
from escalated.store.sqlite.db import connect, run_in_transaction
from escalated.store.queries import load

ESCALATION_COLUMNS = " ".join(load("sqlite")["escalation_columns"].split())

CHUNK = 20_000


def template(workspace_id: str, policy: str, *, resume_url: str | None, secret: str | None, at_ms: int) -> Escalation:
    return Escalation(
        id=f"esc_{ULID()}",
        workspace_id=workspace_id,
        status=OPEN,
        policy=policy,
        agent_id="seed-agent",
        run_id="seed-0",
        content=Content(
            subject=Subject(type="order", id="o-1", label="Order #1"),
            question="Refund 1,200 EUR to the customer?",
            evidence=("Parcel reported lost (ticket 5521).", "Carrier shows delivered, no signature."),
            choices=(Choice(id="approve", label="Approve"), Choice(id="deny", label="Deny")),
        ),
        created_ms=at_ms,
        created_by="key:seed",
        resume=Resume(url=resume_url, secret=secret) if resume_url else None,
        deadline_ms=0,
        default_choice="deny",
        history=(HistoryEntry(event="created", by="key:seed", at_ms=at_ms),),
    )


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _ulid_text(value: int) -> str:
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def _ids(n: int, at_ms: int) -> list[str]:
    """Valid, increasing ULIDs of the seed time (like a monotonic ULID generator's):
    rows arrive in key order, as they do when the server creates them over time."""
    first = (at_ms << 80) | (int.from_bytes(os.urandom(10), "big") >> 8)
    return [f"esc_{_ulid_text(first + i)}" for i in range(n)]


def seed(
    db_path: Path, *, policy: str, offsets_ms: list[int], resume_url: str | None = None, secret: str | None = None
) -> float:
    """Insert one open escalation per offset (its relative deadline). Returns seconds taken."""
    t0 = time.perf_counter()
    conn = connect(db_path, synchronous="OFF")
    conn.execute("PRAGMA cache_size=-262144")  # 256 MB: the indexes of a million rows stay in memory
    try:
        ws = conn.execute(load("sqlite")["workspace_by_name"], {"name": DEFAULT_WORKSPACE}).fetchone()[0]
        at_ms = int(time.time() * 1000)
        first = template(ws, policy, resume_url=resume_url, secret=secret, at_ms=at_ms)
        first = attrs.evolve(first, deadline_ms=offsets_ms[0])
        run_in_transaction(
            conn, store.create_escalation, escalation=first, routes=("*",), notifications=[], idempotency=None, not_before_ms=0
        )
        cols = ESCALATION_COLUMNS.split(", ")
        copy = ", ".join({"id": "?", "run_id": "?", "deadline_ms": "?"}.get(c.strip(), c.strip()) for c in cols)
        insert_esc = f"INSERT INTO escalations ({ESCALATION_COLUMNS}) SELECT {copy} FROM escalations WHERE id = '{first.id}'"
        rest = offsets_ms[1:]
        all_ids = _ids(len(rest), at_ms)
        for start in range(0, len(rest), CHUNK):
            chunk = rest[start : start + CHUNK]
            ids = all_ids[start : start + CHUNK]
            conn.execute("BEGIN")
            conn.executemany(insert_esc, [(eid, f"seed-{start + i + 1}", off) for i, (eid, off) in enumerate(zip(ids, chunk, strict=True))])
            conn.executemany("INSERT INTO escalation_routes (route, escalation_id) VALUES ('*', ?)", [(e,) for e in ids])
            conn.execute("COMMIT")
    finally:
        conn.close()
    return time.perf_counter() - t0


RELATIVE_BELOW_MS = 10**12  # offsets below this are relative; above, already absolute epoch ms


def arm_from(db_path: Path, base_ms: int) -> None:
    """Turn the relative deadlines into absolute ones: deadline = base + offset."""
    conn = sqlite3.connect(str(db_path), isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "UPDATE escalations SET deadline_ms = deadline_ms + ? WHERE deadline_ms < ? AND status = 'open'",
            (base_ms, RELATIVE_BELOW_MS),
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
