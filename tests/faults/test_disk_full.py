"""A full disk, for real: the server's database on a tmpfs that the test fills.

The kernel answers ENOSPC to SQLite's own writes (SQLITE_FULL): nothing is
simulated. Through a real ``escalated serve`` subprocess.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from tests.support.http import Http
from tests.support.api import escalation_body
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess
from tests.support.wait import eventually
from tests.support.tinydisk import TinyDisk


@pytest.fixture
def tiny_disk_server(tiny_disk: TinyDisk):
    proc = ServerProcess(db=tiny_disk.path / "escalated.db").start()
    proc.cli("policy", "set", "disk.full")
    yield proc
    proc.stop()


def create(api: Http, key: str):
    return api.post("/escalations", token=key, json_body=escalation_body("disk.full"))


def until_full(api: Http, key: str):
    """Creates until one is refused; the WAL may hold a few more after the fill."""
    for _ in range(2000):
        resp = create(api, key)
        if resp.status != 201:
            return resp
    raise AssertionError("the disk never filled up")


def test_a_full_disk_answers_503_unavailable_with_retry_after(tiny_disk_server, tiny_disk):
    api = Http(tiny_disk_server.url)
    assert create(api, tiny_disk_server.bootstrap_key).status == 201
    tiny_disk.fill()
    resp = until_full(api, tiny_disk_server.bootstrap_key)
    body = resp.problem(503, "unavailable")
    assert int(resp.headers["Retry-After"]) >= 1
    assert "disk is full" in body["detail"] and b"Traceback" not in resp.body


def test_a_full_disk_logs_one_line_and_no_traceback_however_many_requests_fail(tiny_disk_server, tiny_disk):
    api = Http(tiny_disk_server.url)
    tiny_disk.fill()
    until_full(api, tiny_disk_server.bootstrap_key)
    for _ in range(20):
        create(api, tiny_disk_server.bootstrap_key).problem(503, "unavailable")
    # The log arrives through a pipe read by another thread: wait for the line before counting.
    eventually(lambda: any("disk is full" in line for line in tiny_disk_server.output), timeout_s=5, what="the disk-full log line")
    log = "".join(tiny_disk_server.output)
    assert sum("disk is full" in line for line in log.splitlines()) == 1, log[-3000:]
    assert "Traceback" not in log


def test_writes_succeed_again_once_the_disk_has_space(tiny_disk_server, tiny_disk):
    api = Http(tiny_disk_server.url)
    tiny_disk.fill()
    until_full(api, tiny_disk_server.bootstrap_key)
    tiny_disk.free()
    eventually(lambda: create(api, tiny_disk_server.bootstrap_key).status == 201, timeout_s=15, what="a create after freeing space")


def test_breaches_that_failed_on_a_full_disk_commit_once_there_is_space(tiny_disk_server, tiny_disk):
    """The issue's case: 20 of 20 stayed open after the disk had space again, until a restart."""
    tiny_disk_server.cli("policy", "set", "disk.sla", "--sla", "2s", "--default-choice", "deny")
    api = Http(tiny_disk_server.url)
    ids = [
        api.post("/escalations", token=tiny_disk_server.bootstrap_key, json_body=escalation_body("disk.sla")).json()["id"]
        for _ in range(20)
    ]
    tiny_disk.fill()
    until_full(api, tiny_disk_server.bootstrap_key)
    eventually(lambda: any("breach write failed" in line for line in tiny_disk_server.output), timeout_s=15, what="the failed breach")
    assert all(api.get(f"/escalations/{i}", token=tiny_disk_server.bootstrap_key).json()["status"] == "open" for i in ids)
    tiny_disk.free()
    freed_at = time.monotonic()

    def still_open() -> list[str]:
        return [i for i in ids if api.get(f"/escalations/{i}", token=tiny_disk_server.bootstrap_key).json()["status"] != "resolved"]

    eventually(lambda: not still_open(), timeout_s=20, what="every breach after freeing space")
    print(f"\n20 breaches committed {time.monotonic() - freed_at:.1f} s after the disk had space again")
    for i in ids:
        resolution = api.get(f"/escalations/{i}", token=tiny_disk_server.bootstrap_key).json()["resolution"]
        assert (resolution["resolvedBy"], resolution["choice"]) == ("timeout", "deny")


async def test_a_callback_whose_attempt_cannot_be_recorded_on_a_full_disk_logs_no_traceback(tiny_disk):
    tiny_disk_server = ServerProcess(db=tiny_disk.path / "escalated.db", args=("--log-level", "debug")).start()
    tiny_disk_server.cli("policy", "set", "disk.full")
    receiver = await Receiver(hold=asyncio.Event()).start()
    loop = asyncio.get_running_loop()
    api = Http(tiny_disk_server.url)

    def post(path: str, body: dict):
        return api.post(path, token=tiny_disk_server.bootstrap_key, json_body=body)

    try:
        resume = {"mode": "webhook", "url": receiver.url}
        esc = (await loop.run_in_executor(None, post, "/escalations", escalation_body("disk.full", resume=resume))).json()
        assert (await loop.run_in_executor(None, post, f"/escalations/{esc['id']}/decide", {"choice": "approve"})).status == 200
        await receiver.wait_for(1)  # the attempt is at the receiver, held
        tiny_disk.fill()
        await loop.run_in_executor(None, until_full, api, tiny_disk_server.bootstrap_key)
        receiver.hold.set()  # answered 200; recording that attempt fails
        tried = ("not recorded", "Task exception")  # what the sender says once it tried (now, and before the fix)
        await loop.run_in_executor(
            None, lambda: eventually(lambda: any(t in line for line in tiny_disk_server.output for t in tried), timeout_s=15, what="the record")
        )
        tiny_disk.free()
        # New work wakes the sender, which sends the unrecorded callback again.
        other = (await loop.run_in_executor(None, post, "/escalations", escalation_body("disk.full", resume=resume))).json()
        await loop.run_in_executor(None, post, f"/escalations/{other['id']}/decide", {"choice": "approve"})

        def delivered() -> bool:
            found = api.get(f"/escalations/{esc['id']}/deliveries", token=tiny_disk_server.bootstrap_key).json()["data"]
            return found[0]["status"] == "delivered"

        await loop.run_in_executor(None, lambda: eventually(delivered, timeout_s=15, what="the callback recorded"))
    finally:
        await receiver.stop()
        tiny_disk_server.stop()
    assert "Traceback" not in "".join(tiny_disk_server.output)


async def test_reminders_due_on_a_full_disk_log_one_line_and_go_out_once_there_is_space(tiny_disk):
    """The SLA clock's reminders fail on a full disk (the reminder's outbox row
    cannot be written): a warning line, no traceback, and the reminder goes
    out once the disk has space again."""
    hook = await Receiver().start()
    tiny_disk_server = ServerProcess(db=tiny_disk.path / "escalated.db").start()
    api = Http(tiny_disk_server.url)
    try:
        tiny_disk_server.cli("policy", "set", "disk.remind", "--notify", f"webhook:{hook.url}", "--remind-every", "1s")
        body = escalation_body("disk.remind")
        assert (await asyncio.to_thread(api.post, "/escalations", token=tiny_disk_server.bootstrap_key, json_body=body)).status == 201
        await hook.wait_for(1)  # escalation.created
        tiny_disk.fill()
        await asyncio.to_thread(until_full, api, tiny_disk_server.bootstrap_key)
        failed = "reminders and levels failed"
        await asyncio.to_thread(
            lambda: eventually(lambda: any(failed in line for line in tiny_disk_server.output), timeout_s=15, what="the failed reminder")
        )
        tiny_disk.free()
        events: list[str] = []
        while "escalation.reminded" not in events:  # each wait is bounded by the receiver's deadline
            events = [json.loads(g.body)["event"] for g in await hook.wait_for(len(events) + 1)]
    finally:
        await hook.stop()
        tiny_disk_server.stop()
    log = "".join(tiny_disk_server.output)
    assert "Traceback" not in log, log[-3000:]
    assert "disk is full" in next(line for line in log.splitlines() if failed in line)
