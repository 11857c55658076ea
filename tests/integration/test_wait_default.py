"""``GET /escalations/{id}/wait`` without ``timeout`` waits the contract's 30 s
(CONTRACT §3: ``wait?timeout=30``), then answers the escalation as it is.

The only way to see a default wait is to wait it: this test spends 30 s of
wall time (no CPU) on one open escalation nobody decides.
"""

from __future__ import annotations

import time

import pytest

from escalated.core.admin import PolicyRequest
from escalated.core.settings import Settings, parse_db
from escalated.server import create_app
from tests.conftest import fresh_db
from tests.support import setup
from tests.support.api import escalation_body

CONTRACT_DEFAULT_WAIT_S = 30.0

pytestmark = pytest.mark.only_on("sqlite", reason="a timer, not the store: 30 s once is enough")


async def test_wait_without_a_timeout_answers_open_after_30_s(aiohttp_client, request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        client = await aiohttp_client(create_app(Settings(db_path=parse_db(db))))
        headers = {"Authorization": f"Bearer {await setup.add_key(client.app, name='agent')}"}
        await setup.set_policy(client.app, PolicyRequest(key="refunds.large"))
        created = await client.post("/escalations", json=escalation_body(), headers=headers)
        assert created.status == 201
        esc_id = (await created.json())["id"]

        started = time.monotonic()
        r = await client.get(f"/escalations/{esc_id}/wait", headers=headers)
        waited_s = time.monotonic() - started

        assert r.status == 200 and (await r.json())["status"] == "open"
        assert CONTRACT_DEFAULT_WAIT_S - 0.5 <= waited_s <= CONTRACT_DEFAULT_WAIT_S + 5, waited_s
        await client.close()  # before its database is dropped
