"""The single writer (store/sqlite/db.py's Writer) on a real SQLite file: group commit,
one failing job never undoes the others, callers resolve only after COMMIT,
and another process holding the write lock never blocks the event loop."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import pytest

from escalated.errors import DatabaseBusy
from escalated.http.statuses import status_of
from escalated.store.sqlite import db as dbmod
from escalated.store.sqlite.connector import SqliteConnector
from escalated.store.sqlite.db import Database


@pytest.fixture
async def db(tmp_path):
    database = await Database.open(tmp_path / "writer.db")
    await database.write(lambda conn: conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)"))
    yield database
    if not database.writer._closed:
        await database.close()


def insert(conn: sqlite3.Connection, *, key: str, value: int = 0) -> str:
    conn.execute("INSERT INTO t (k, v) VALUES (?, ?)", (key, value))
    return key


def insert_then_fail(conn: sqlite3.Connection, *, key: str) -> None:
    conn.execute("INSERT INTO t (k, v) VALUES (?, ?)", (key, 0))
    raise ValueError(f"job {key} refuses")


def other_connection(database: Database) -> sqlite3.Connection:
    return sqlite3.connect(str(database.path), isolation_level=None, timeout=0)


def keys_on_disk(database: Database) -> set[str]:
    conn = other_connection(database)
    try:
        return {row[0] for row in conn.execute("SELECT k FROM t")}
    finally:
        conn.close()


async def test_concurrent_jobs_share_one_commit(db):
    commits_before, jobs_before = db.writer.commits, db.writer.jobs
    results = await asyncio.gather(*(db.write(insert, key=f"k{i}") for i in range(50)))
    assert results == [f"k{i}" for i in range(50)]
    assert db.writer.jobs - jobs_before == 50
    # Submitted in one loop iteration: one group, one COMMIT.
    assert db.writer.commits - commits_before == 1
    assert keys_on_disk(db) == {f"k{i}" for i in range(50)}


async def test_jobs_queued_during_a_commit_form_the_next_group(db):
    first = asyncio.ensure_future(db.write(insert, key="first"))
    await asyncio.sleep(0)  # the first group starts and its COMMIT goes to the thread
    later = [asyncio.ensure_future(db.write(insert, key=f"later{i}")) for i in range(20)]
    commits_before = db.writer.commits
    await asyncio.gather(first, *later)
    assert db.writer.commits - commits_before <= 2
    assert len(keys_on_disk(db)) == 21


async def test_a_failing_job_is_undone_alone(db):
    outcomes = await asyncio.gather(
        db.write(insert, key="before"),
        db.write(insert_then_fail, key="bad"),
        db.write(insert, key="after"),
        return_exceptions=True,
    )
    assert outcomes[0] == "before" and outcomes[2] == "after"
    assert isinstance(outcomes[1], ValueError) and "bad refuses" in str(outcomes[1])
    assert keys_on_disk(db) == {"before", "after"}


async def test_a_caller_resumes_only_after_its_commit(db):
    seen_on_resume = {}

    async def create_and_look(key: str) -> None:
        await db.write(insert, key=key)
        # Another connection (another process, say) sees the row already.
        seen_on_resume[key] = key in keys_on_disk(db)

    await asyncio.gather(*(create_and_look(f"k{i}") for i in range(10)))
    assert seen_on_resume == {f"k{i}": True for i in range(10)}


async def test_a_failed_commit_fails_every_job_of_its_group_and_the_next_group_works(db):
    # A deferred foreign key is only checked at COMMIT: the way to make a
    # COMMIT itself fail on a healthy disk.
    await db.write(
        lambda conn: conn.execute(
            "CREATE TABLE child (parent TEXT REFERENCES t(k) DEFERRABLE INITIALLY DEFERRED)"
        )
    )
    db._write_conn.execute("PRAGMA foreign_keys=ON")

    def orphan(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO child (parent) VALUES ('nobody')")

    outcomes = await asyncio.gather(db.write(insert, key="same-group"), db.write(orphan), return_exceptions=True)
    assert all(isinstance(o, sqlite3.IntegrityError) for o in outcomes), outcomes
    assert "same-group" not in keys_on_disk(db)
    assert await db.write(insert, key="next") == "next"
    assert keys_on_disk(db) == {"next"}


async def test_a_lock_held_elsewhere_delays_the_write_without_blocking_the_loop(db):
    holder = other_connection(db)
    holder.execute("BEGIN IMMEDIATE")  # as the CLI does while it changes a policy
    try:
        write = asyncio.ensure_future(db.write(insert, key="waited"))
        started = time.monotonic()
        await asyncio.sleep(0.2)
        # The loop kept running: the sleep was not stretched by a blocked writer.
        assert time.monotonic() - started < 0.5
        assert not write.done()
        assert db.lookup("SELECT COUNT(*) FROM t") == (0,)
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert await asyncio.wait_for(write, 5) == "waited"
    assert keys_on_disk(db) == {"waited"}


async def test_a_lock_held_past_the_busy_timeout_fails_the_write(db, monkeypatch):
    monkeypatch.setattr(dbmod, "BUSY_TIMEOUT_S", 0.1)
    holder = other_connection(db)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DatabaseBusy, match="write lock") as raised:
            await asyncio.wait_for(db.write(insert, key="never"), 5)
        assert status_of(raised.value) == 503 and raised.value.extra["retry_after_s"] == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert await db.write(insert, key="later") == "later"


async def test_close_commits_what_was_queued_then_refuses_new_jobs(db):
    queued = [asyncio.ensure_future(db.write(insert, key=f"q{i}")) for i in range(5)]
    await asyncio.sleep(0)
    await db.close()
    assert [q.result() for q in queued] == [f"q{i}" for i in range(5)]
    assert keys_on_disk(db) == {f"q{i}" for i in range(5)}
    with pytest.raises(RuntimeError, match="closed"):
        await db.write(insert, key="too-late")


async def test_a_failing_job_alone_leaves_nothing_behind(db):
    with pytest.raises(ValueError, match="alone refuses"):
        await db.write(insert_then_fail, key="alone")
    assert keys_on_disk(db) == set()
    assert await db.write(insert, key="next") == "next"


async def test_after_a_failure_each_job_still_sees_the_writes_before_it_in_its_group(db):
    def count(conn: sqlite3.Connection) -> int:
        return conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]

    outcomes = await asyncio.gather(
        db.write(insert, key="a"),
        db.write(count),
        db.write(insert_then_fail, key="bad"),
        db.write(insert, key="b"),
        db.write(count),
        return_exceptions=True,
    )
    assert outcomes[0] == "a" and outcomes[1] == 1 and isinstance(outcomes[2], ValueError)
    assert outcomes[3] == "b" and outcomes[4] == 2
    assert keys_on_disk(db) == {"a", "b"}


async def test_an_async_job_runs_in_the_group_and_commits_with_it(db):
    """A job written once for both dialects (a coroutine over Tx) runs on
    SQLite's writer to its end in one step, in the group's transaction."""
    connector = SqliteConnector(db)

    async def job(tx, *, key: str) -> int:
        await tx.run("INSERT INTO t (k, v) VALUES (:k, :v)", {"k": key, "v": 1})
        return await tx.changed("UPDATE t SET v = v + 1 WHERE k = :k", {"k": key})

    assert await asyncio.gather(connector.write(job, key="a"), db.write(insert, key="b")) == [1, "b"]
    assert keys_on_disk(db) == {"a", "b"}


async def test_an_async_job_that_waits_fails_alone_and_writes_nothing(db):
    """On SQLite a job never waits: one that does is refused and undone,
    not left half-run inside the writer's transaction."""
    connector = SqliteConnector(db)

    async def waits(tx, *, key: str) -> None:
        await tx.run("INSERT INTO t (k, v) VALUES (:k, 0)", {"k": key})
        await asyncio.sleep(0)

    with pytest.raises(RuntimeError, match="waited"):
        await connector.write(waits, key="never")
    assert await db.write(insert, key="after") == "after"
    assert keys_on_disk(db) == {"after"}
