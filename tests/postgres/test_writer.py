"""The PostgreSQL writer: group commit on one connection, against a real server."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from escalated.errors import DatabaseUnavailable
from escalated.store.postgres.writer import DOORBELL_CHANNEL, LastRows, PgWriter

pytestmark = pytest.mark.postgres


async def insert_workspace(tx, *, name: str) -> str:
    await tx.execute("INSERT INTO workspaces (id, name, created_ms) VALUES (%s, %s, 0)", (f"wsp_{name}", name))
    return name


async def count_workspaces(url: str) -> int:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        return (await (await conn.execute("SELECT count(*) FROM workspaces")).fetchone())[0]


async def test_concurrent_jobs_commit_together_in_fewer_transactions_than_jobs(postgres_url):
    writer = await PgWriter(postgres_url).start()
    names = await asyncio.gather(*(writer.submit(insert_workspace, name=f"w{i}") for i in range(200)))
    await writer.close()
    assert names == [f"w{i}" for i in range(200)]
    assert writer.jobs == 200 and writer.commits < 20
    assert await count_workspaces(postgres_url) == 201  # with default


async def test_a_failing_job_fails_alone_and_the_rest_of_its_group_commits(postgres_url):
    writer = await PgWriter(postgres_url).start()
    results = await asyncio.gather(
        writer.submit(insert_workspace, name="a"),
        writer.submit(insert_workspace, name="default"),  # taken by the migration: a unique violation
        writer.submit(insert_workspace, name="b"),
        return_exceptions=True,
    )
    await writer.close()
    assert results[0] == "a" and results[2] == "b"
    assert isinstance(results[1], psycopg.errors.UniqueViolation)
    assert await count_workspaces(postgres_url) == 3


async def test_groups_failing_again_and_again_still_fail_each_job_alone(postgres_url):
    """A unique violation aborts the pipelined group; the PREPAREs psycopg
    sent after it (for statements run ``prepare_threshold`` times, the
    doorbell's notify first) were skipped, and the careful path must not run
    them as prepared: once it did, every job of the group failed with
    "prepared statement _pg3_N does not exist"."""
    writer = await PgWriter(postgres_url).start()
    rounds = 15  # three times psycopg's prepare_threshold (5)
    for i in range(rounds):
        ok, taken = await asyncio.gather(
            writer.submit(insert_workspace, name=f"w{i}"),
            writer.submit(insert_workspace, name="default"),
            return_exceptions=True,
        )
        assert ok == f"w{i}", ok
        assert isinstance(taken, psycopg.errors.UniqueViolation), taken
    await writer.close()
    assert await count_workspaces(postgres_url) == 1 + rounds


async def test_each_commit_group_rings_the_doorbell_once(postgres_url):
    listener = await psycopg.AsyncConnection.connect(postgres_url, autocommit=True)
    await listener.execute(f"LISTEN {DOORBELL_CHANNEL}")
    writer = await PgWriter(postgres_url).start()
    await asyncio.gather(*(writer.submit(insert_workspace, name=f"w{i}") for i in range(50)))
    await writer.close()
    rings = 0
    async for _ in listener.notifies(timeout=1.0):
        rings += 1
    await listener.close()
    assert rings == writer.commits


@pytest.mark.parametrize(("durability", "setting"), [("full", "on"), ("normal", "off")])
async def test_durability_sets_the_writer_connections_synchronous_commit(postgres_url, durability, setting):
    async def show(tx):
        return (await (await tx.execute("SHOW synchronous_commit")).fetchone())[0]

    writer = await PgWriter(postgres_url, durability=durability).start()
    value = await writer.submit(show)
    await writer.close()
    assert value == setting


async def test_a_lost_connection_fails_its_group_as_unavailable_and_the_next_group_reconnects(postgres_url):
    async def backend_pid(tx):
        return tx.conn.info.backend_pid

    writer = await PgWriter(postgres_url).start()
    pid = await writer.submit(backend_pid)
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as admin:
        await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(DatabaseUnavailable):  # 503 unavailable: whether it committed is unknown
        await writer.submit(insert_workspace, name="lost")
    assert await writer.submit(insert_workspace, name="after") == "after"
    await writer.close()
    assert await count_workspaces(postgres_url) == 2


LAST = LastRows(
    lock_sql="SELECT pg_advisory_xact_lock(42)",
    insert_sql="INSERT INTO escalation_events (escalation_id, event, by, at_ms) VALUES (%s, %s, %s, %s)",
)


async def add_event(tx, *, escalation_id: str, fail: bool = False) -> str:
    tx.write_last((escalation_id, "created", "test", 0))
    if fail:
        raise ValueError("this job fails after asking for a row")
    return escalation_id


async def events(url: str) -> list[tuple[int, str]]:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        return await (await conn.execute("SELECT seq, escalation_id FROM escalation_events ORDER BY seq")).fetchall()


async def test_rows_asked_for_last_are_written_with_their_group_in_job_order(postgres_url):
    writer = await PgWriter(postgres_url, last_rows=LAST).start()
    await asyncio.gather(*(writer.submit(add_event, escalation_id=f"esc_{i}") for i in range(5)))
    await writer.close()
    assert [eid for _, eid in await events(postgres_url)] == [f"esc_{i}" for i in range(5)]


async def test_the_rows_of_a_job_that_fails_are_not_written(postgres_url):
    writer = await PgWriter(postgres_url, last_rows=LAST).start()
    results = await asyncio.gather(
        writer.submit(add_event, escalation_id="esc_a"),
        writer.submit(add_event, escalation_id="esc_b", fail=True),
        writer.submit(add_event, escalation_id="esc_c"),
        return_exceptions=True,
    )
    await writer.close()
    assert isinstance(results[1], ValueError)
    assert [eid for _, eid in await events(postgres_url)] == ["esc_a", "esc_c"]


async def test_a_job_in_a_pipelined_group_reads_how_many_rows_its_update_changed(postgres_url):
    async def rename_default(tx, *, new_name: str) -> int:
        return await tx.changed("UPDATE workspaces SET name = %s WHERE name = 'default'", (new_name,))

    writer = await PgWriter(postgres_url).start()
    counts = await asyncio.gather(writer.submit(rename_default, new_name="first"), writer.submit(rename_default, new_name="second"))
    await writer.close()
    assert counts == [1, 0]  # never -1 ("not known yet") read as "nothing changed"


async def test_writes_failed_by_a_deadlock_between_two_writers_run_again_and_commit(postgres_url):
    """Two replicas' writers lock the same two rows in opposite orders.

    PostgreSQL breaks the deadlock by failing one statement (40P01); the
    other group can finish only once the loser's transaction lets its lock
    go. A job failing first in each group sends both down the careful path
    (a savepoint per job), where a deadlock used to reach its caller: a 500
    for, say, one of two last approvals on two replicas."""
    seed = await PgWriter(postgres_url).start()
    await asyncio.gather(seed.submit(insert_workspace, name="left"), seed.submit(insert_workspace, name="right"))
    await seed.close()

    arrived: set[str] = set()
    everyone = asyncio.Event()

    async def lock_both(tx, *, me: str, first: str, second: str) -> str:
        await tx.execute("SELECT id FROM workspaces WHERE id = %s FOR UPDATE", (f"wsp_{first}",))
        arrived.add(me)
        if len(arrived) == 2:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), timeout=30)
        await tx.execute("SELECT id FROM workspaces WHERE id = %s FOR UPDATE", (f"wsp_{second}",))
        return me

    async def refused(tx) -> None:
        raise ValueError("a job that fails first sends its group down the careful path")

    one, two = await PgWriter(postgres_url).start(), await PgWriter(postgres_url).start()
    try:
        results = await asyncio.wait_for(
            asyncio.gather(
                one.submit(refused),
                one.submit(lock_both, me="one", first="left", second="right"),
                two.submit(refused),
                two.submit(lock_both, me="two", first="right", second="left"),
                return_exceptions=True,
            ),
            timeout=60,
        )
    finally:
        await one.close()
        await two.close()
    assert isinstance(results[0], ValueError) and isinstance(results[2], ValueError)
    assert results[1] == "one" and results[3] == "two", results


async def test_a_write_still_deadlocked_after_the_retries_answers_unavailable(postgres_url):
    """Every run of the job deadlocks with another session, and PostgreSQL
    picks the job's side each time (its deadlock_timeout is the shorter):
    after the retries the caller gets 503 ``unavailable``, not the deadlock
    (which reached HTTP as a 500)."""
    seed = await PgWriter(postgres_url).start()
    await asyncio.gather(seed.submit(insert_workspace, name="left"), seed.submit(insert_workspace, name="right"))
    await seed.close()
    rivals: list[asyncio.Task] = []

    async def rival(holding: asyncio.Event) -> None:
        async with await psycopg.AsyncConnection.connect(postgres_url) as conn, conn.transaction():
            await conn.execute("SET LOCAL deadlock_timeout = '10s'")
            await conn.execute("SELECT id FROM workspaces WHERE id = 'wsp_right' FOR UPDATE")
            holding.set()
            await conn.execute("SELECT id FROM workspaces WHERE id = 'wsp_left' FOR UPDATE")

    async def deadlocks(tx) -> None:
        # The last rival must have its row and be gone before this run locks wsp_left:
        # the deadlock's abort frees wsp_left for the rival, but a retry that got there
        # first would leave the rival holding wsp_right and the next rival waiting on it
        # with no deadlock for PostgreSQL to find (seen on a loaded machine).
        if rivals:
            await rivals[-1]
        await tx.run("SET LOCAL deadlock_timeout = '50ms'")
        await tx.one("SELECT id FROM workspaces WHERE id = 'wsp_left' FOR UPDATE")  # one(): sent and answered
        holding = asyncio.Event()
        rivals.append(asyncio.create_task(rival(holding)))
        await asyncio.wait_for(holding.wait(), timeout=30)
        await tx.one("SELECT id FROM workspaces WHERE id = 'wsp_right' FOR UPDATE")

    writer = await PgWriter(postgres_url).start()
    try:
        with pytest.raises(DatabaseUnavailable) as raised:
            await asyncio.wait_for(writer.submit(deadlocks), timeout=60)
        assert await writer.submit(insert_workspace, name="after") == "after"  # the writer goes on
    finally:
        await writer.close()
        await asyncio.gather(*rivals)
    assert raised.value.code == "unavailable" and raised.value.extra["retry_after_s"] > 0
    assert len(rivals) > 3  # the job ran again after each deadlock
