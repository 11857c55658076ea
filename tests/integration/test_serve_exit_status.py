"""``serve`` exits non-zero when it stops because a background task died.

Before, the engine's monitor stopped the server with SIGTERM, the same
stop as an operator's, and the process exited 0: a supervisor that
restarts only failed services (systemd's ``Restart=on-failure``) left it
down. The sender is made to die for real: a pending delivery's stored
attempts are corrupted under the running server, so its next read of the
outbox raises (not a database outage, which it waits out).
"""

from __future__ import annotations

import os
import signal
import sqlite3

import aiohttp

from tests.conftest import fresh_db
from tests.support.api import Api
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess, cli
from tests.support.wait import eventually

BREAK = "UPDATE deliveries SET attempts_json = '{broken' WHERE status = 'pending'"


def corrupt_the_outbox(db) -> None:
    if isinstance(db, str):  # a postgresql:// URL
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute(BREAK)
        return
    with sqlite3.connect(db) as conn:
        conn.execute(BREAK)


async def attempt_recorded(api: Api, escalation_id: str) -> None:
    async def recorded() -> bool:
        return any(d["attempts"] for d in await api.deliveries(escalation_id))

    await eventually(recorded, timeout_s=15, what="an attempt recorded")


async def test_a_server_stopped_by_a_dead_background_task_exits_1(request, fn_backend, tmp_path):
    receiver = await Receiver(script=[500] * 100).start()  # every attempt fails: the delivery stays pending
    with fresh_db(request, fn_backend, tmp_path) as db:
        cli(db, "policy", "set", "refunds.large")
        server = ServerProcess(db=db, args=("--retry-schedule", "1s")).start()
        try:
            async with aiohttp.ClientSession() as session:
                api = Api(server.url, server.bootstrap_key, session)
                esc = await api.create(resume={"mode": "webhook", "url": receiver.url})
                await api.decide(esc["id"])
                await receiver.wait_for(1)
                await attempt_recorded(api, esc["id"])
            corrupt_the_outbox(db)
            code = server.wait_exit(timeout_s=60)
        finally:
            server.stop()
            await receiver.stop()
    output = "".join(server.output)
    assert "outbox-sender died" in output
    assert code == 1, output[-2000:]


def test_a_sigterm_as_soon_as_it_listens_is_a_clean_stop(tmp_path):
    """A supervisor may stop the server the moment it says it listens: that
    SIGTERM is an operator's stop (exit 0), not death by signal (-15), which
    it was while the handlers went in after the "Listening on" line."""
    for attempt in range(5):  # the window was a few lines of start-up: several tries make it likely
        server = ServerProcess(db=tmp_path / f"escalated-{attempt}.db").start()
        os.kill(server.pid, signal.SIGTERM)
        code = server.wait_exit(timeout_s=30)
        assert code == 0, "".join(server.output)[-2000:]
