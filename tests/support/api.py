"""Raw-HTTP helpers for tests (deliberately not our client library)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import aiohttp


_counter = itertools.count()


def unique(prefix: str) -> str:
    """A name no other test of the session uses (tests often share one server)."""
    return f"{prefix}-{next(_counter)}"


def escalation_body(policy: str = "refunds.large", **overrides: Any) -> dict:
    """A valid create body; ``policy`` must name an existing policy.

    Each body has a run id of its own. An override of ``...`` drops the
    field (to test what happens without it).
    """
    body = {
        "policy": policy,
        "agentId": "billing-agent",
        "runId": unique("run"),
        "subject": {"type": "order", "id": "o-981", "label": "Order #981"},
        "question": "Refund 1,200 EUR?",
        "evidence": ["customer since 2019", "order delivered"],
        "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}


class Api:
    def __init__(self, url: str, token: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self.token = token
        self.session = session

    def _headers(self, extra: dict | None = None) -> dict:
        return {"Authorization": f"Bearer {self.token}", **(extra or {})}

    async def call(self, method: str, path: str, *, json: Any = None, headers: dict | None = None) -> tuple[int, Any, dict]:
        async with self.session.request(method, self.url + path, json=json, headers=self._headers(headers)) as r:
            body = await r.json(content_type=None) if r.content_length != 0 else None
            return r.status, body, dict(r.headers)

    async def create(self, **overrides: Any) -> dict:
        status, body, _ = await self.call("POST", "/escalations", json=escalation_body(**overrides))
        assert status == 201, body
        return body

    async def decide(self, escalation_id: str, choice: str = "approve", **extra: Any) -> tuple[int, Any]:
        status, body, _ = await self.call("POST", f"/escalations/{escalation_id}/decide", json={"choice": choice, **extra})
        return status, body

    async def get(self, escalation_id: str) -> dict:
        status, body, _ = await self.call("GET", f"/escalations/{escalation_id}")
        assert status == 200, body
        return body

    async def deliveries(self, escalation_id: str) -> list[dict]:
        status, body, _ = await self.call("GET", f"/escalations/{escalation_id}/deliveries")
        assert status == 200, body
        return body["data"]

    async def wait_delivery(self, escalation_id: str, status: str, *, timeout_s: float = 15.0) -> dict:
        async with asyncio.timeout(timeout_s):
            while True:
                found = await self.deliveries(escalation_id)
                callbacks = [d for d in found if d["kind"] == "callback"]
                if callbacks and callbacks[0]["status"] == status:
                    return callbacks[0]
                await asyncio.sleep(0.05)
