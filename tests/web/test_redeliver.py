"""Redelivery from the web page goes through ``Service.retry_delivery``, which
wakes the sender: the callback goes out at once, not at its next scheduled try."""

from __future__ import annotations

import asyncio

from tests.conftest import fresh_db
from tests.support.api import escalation_body
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess
from tests.web.support import WebClient, api


async def _attempts_recorded(server, escalation_id: str, count: int, *, timeout_s: float = 10.0) -> None:
    path = f"/escalations/{escalation_id}/deliveries"
    async with asyncio.timeout(timeout_s):
        while True:
            _, found = await asyncio.to_thread(api, server.url, "GET", path, server.bootstrap_key)
            if len(found["data"][0]["attempts"]) >= count:
                return
            await asyncio.sleep(0.05)


async def test_a_callback_redelivered_from_the_web_page_is_sent_at_once(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        await _redeliver_from_the_page(ServerProcess(db=db, args=("--retry-schedule", "1h")))


async def _redeliver_from_the_page(server: ServerProcess) -> None:
    receiver = await Receiver(script=[500]).start()  # the first attempt fails
    await asyncio.to_thread(server.start)
    try:
        await asyncio.to_thread(server.cli, "policy", "set", "refunds")
        alice = await asyncio.to_thread(server.cli, "users", "add", "alice")
        body = escalation_body("refunds", resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
        status, esc = await asyncio.to_thread(api, server.url, "POST", "/escalations", server.bootstrap_key, body)
        assert status == 201, esc
        decide = f"/escalations/{esc['id']}/decide"
        await asyncio.to_thread(api, server.url, "POST", decide, server.bootstrap_key, {"choice": "approve"})
        await receiver.wait_for(1)
        await _attempts_recorded(server, esc["id"], 1)  # failed: the next try is an hour away

        def redeliver() -> int:
            browser = WebClient(server.url)
            assert browser.sign_in(alice).status == 303
            path = f"/app/escalations/{esc['id']}"
            return browser.submit(path, f"{path}/redeliver", {}).status

        assert await asyncio.to_thread(redeliver) == 303
        await receiver.wait_for(2, timeout_s=10)
    finally:
        await asyncio.to_thread(server.stop)
        await receiver.stop()
