"""Receivers that hang or answer too much must not hurt anyone else.

A real ``escalated serve`` subprocess delivers to real aiohttp receivers on
loopback: one that never answers must not delay a healthy one's callback
(per-receiver limit, ``sender_per_host``), and one that answers with an
endless body must not make the server read it (at most 64 KiB is read).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from aiohttp import web

from tests.conftest import fresh_db
from tests.security.conftest import create
from tests.support.receiver import Receiver
from tests.support.http import Http
from tests.support.wait import eventually
from tests.support.server import ServerProcess

HUNG_CALLBACKS = 40
HUNG_PORTS = 10
HUGE_BODY_BYTES = 512 * 1024 * 1024


class EndlessBodyReceiver:
    """Answers 200 and then streams up to ``HUGE_BODY_BYTES`` of body."""

    def __init__(self) -> None:
        self.sent_bytes = 0
        self.answers = 0
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        self.answers += 1
        response = web.StreamResponse(status=200, headers={"Content-Length": str(HUGE_BODY_BYTES)})
        await response.prepare(request)
        chunk = b"x" * (1024 * 1024)
        try:
            while self.sent_bytes < HUGE_BODY_BYTES * self.answers:
                await response.write(chunk)
                self.sent_bytes += len(chunk)
        except (ConnectionError, RuntimeError):
            pass  # the server hung up: what we want
        return response

    async def start(self) -> EndlessBodyReceiver:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def _decide(http: Http, key: str, url: str) -> str:
    esc = create(http, key, "sec.open", resume={"mode": "webhook", "url": url, "secret": "s"})
    assert http.post(f"/escalations/{esc['id']}/decide", token=key, json_body={"choice": "approve"}).status == 200
    return esc["id"]


@pytest.fixture
def patient_server(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        proc = ServerProcess(db=db, args=("--delivery-timeout", "60s", "--retry-schedule", "1h", "--retry-for", "2h")).start()
        proc.cli("policy", "set", "sec.open")
        yield proc
        proc.kill()


async def test_a_hung_receiver_does_not_delay_a_healthy_receivers_callback(patient_server):
    hung, healthy = await Receiver(hold=asyncio.Event()).start(), await Receiver().start()  # hung: never answers until stopped
    http = Http(patient_server.url)
    try:
        await asyncio.to_thread(_decide, http, patient_server.bootstrap_key, healthy.url)  # the sender has served it before
        await healthy.wait_for(1, timeout_s=5)
        for _ in range(HUNG_CALLBACKS):
            await asyncio.to_thread(_decide, http, patient_server.bootstrap_key, hung.url)
        await asyncio.to_thread(eventually, lambda: len(hung.received) >= 4, what="the hung receiver's share of attempts")
        for n in range(2, 7):  # one after another: each must find capacity, not only the first
            started = time.monotonic()
            await asyncio.to_thread(_decide, http, patient_server.bootstrap_key, healthy.url)
            await healthy.wait_for(n, timeout_s=5)  # before: behind 40 hung ones, up to 60 s (the delivery timeout)
            assert time.monotonic() - started < 5
        assert len(hung.received) == 4  # the per-receiver limit, while the hung ones hold their slots
    finally:
        await healthy.stop()
        await hung.stop()


async def test_hung_receivers_on_ten_ports_of_one_host_do_not_delay_a_healthy_receiver(patient_server):
    """A receiver is scheme, host and port: local agents differ by port. Before
    (#24), 40 callbacks to hung receivers on 10 ports filled the sender's 8
    shared slots and a healthy callback waited 11-54 s."""
    hung = [await Receiver(hold=asyncio.Event()).start() for _ in range(HUNG_PORTS)]
    healthy = await Receiver().start()
    http = Http(patient_server.url)
    try:
        for receiver in hung:
            for _ in range(HUNG_CALLBACKS // HUNG_PORTS):
                await asyncio.to_thread(_decide, http, patient_server.bootstrap_key, receiver.url)
        # Every port holds its own share in flight at once: none waits behind another's.
        await asyncio.to_thread(eventually, lambda: all(len(r.received) >= 4 for r in hung), what="each hung port's share of attempts")
        for n in range(1, 6):
            started = time.monotonic()
            await asyncio.to_thread(_decide, http, patient_server.bootstrap_key, healthy.url)
            await healthy.wait_for(n, timeout_s=5)  # before: 11-54 s behind the hung ports
            assert time.monotonic() - started < 5
    finally:
        await healthy.stop()
        for receiver in hung:
            await receiver.stop()


async def test_hung_webhook_receivers_on_ten_ports_do_not_delay_a_healthy_notification(patient_server):
    """The same for notifications (``webhook:`` targets): before, they shared the 8 slots too."""
    hung = [await Receiver(hold=asyncio.Event()).start() for _ in range(HUNG_PORTS)]
    healthy = await Receiver().start()
    http = Http(patient_server.url)
    try:
        hooks = [arg for r in hung for arg in ("--notify", f"webhook:{r.url}")]
        await asyncio.to_thread(patient_server.cli, "policy", "set", "sec.hung-hooks", *hooks)
        await asyncio.to_thread(patient_server.cli, "policy", "set", "sec.healthy-hook", "--notify", f"webhook:{healthy.url}")
        for _ in range(HUNG_CALLBACKS // HUNG_PORTS):  # each create notifies every hung port
            await asyncio.to_thread(create, http, patient_server.bootstrap_key, "sec.hung-hooks")
        await asyncio.to_thread(eventually, lambda: all(len(r.received) >= 4 for r in hung), what="each hung port's share of attempts")
        for n in range(1, 4):
            started = time.monotonic()
            await asyncio.to_thread(create, http, patient_server.bootstrap_key, "sec.healthy-hook")
            await healthy.wait_for(n, timeout_s=5)
            assert time.monotonic() - started < 5
    finally:
        await healthy.stop()
        for receiver in hung:
            await receiver.stop()


async def test_an_endless_answer_is_not_read_and_the_callback_counts_as_delivered(patient_server):
    receiver = await EndlessBodyReceiver().start()
    http = Http(patient_server.url)
    try:
        esc_id = await asyncio.to_thread(_decide, http, patient_server.bootstrap_key, f"http://127.0.0.1:{receiver.port}/hook")

        def delivered():
            delivery = http.get(f"/escalations/{esc_id}/deliveries", token=patient_server.bootstrap_key).json()["data"][0]
            return delivery if delivery["status"] == "delivered" else None

        delivery = await asyncio.to_thread(eventually, delivered, timeout_s=20, what="the callback to be delivered")
        assert delivery["attempts"][0]["statusCode"] == 200
        assert receiver.sent_bytes < HUGE_BODY_BYTES // 4, receiver.sent_bytes  # the server hung up early
        assert _peak_rss_mb(patient_server._proc.pid) < 200  # before: the whole answer was held in memory
    finally:
        await receiver.stop()
