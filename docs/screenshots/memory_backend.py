"""An in-memory backend holding fixed escalations, for the README pictures only.

``make.py`` draws the screenshots from it so the pictures show varied ages
and fixed ids. Tests never use it: they drive the app against a real server. It keeps the server's state rules
(409 once resolved or cancelled) so the UI behaves the same; it sends no
callbacks and streams no events (the app's poll picks up changes).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable
from typing import Any

from escalated.agent.client import ApiError, Event
from escalated.timeutil import format_ms, now_ms
from escalated.tui.samples import REQUESTS

LIVE = ("open", "acknowledged")


class MemoryBackend:
    base_url = "memory://samples"

    def __init__(self, escalations: list[dict], *, user: str = "alice", clock: Callable[[], int] = now_ms):
        self._escalations = {e["id"]: copy.deepcopy(e) for e in escalations}
        self._deliveries: dict[str, list[dict]] = {}
        self.user = user
        self._clock = clock

    async def list_escalations(self, *, limit: int | None = None, cursor: str | None = None, **_: object) -> dict:
        newest_first = sorted(self._escalations.values(), key=lambda e: e["createdAt"], reverse=True)
        return {"data": copy.deepcopy(newest_first), "nextCursor": None}

    async def get_escalation(self, escalation_id: str) -> dict:
        return copy.deepcopy(self._find(escalation_id))

    async def acknowledge(self, escalation_id: str) -> dict:
        escalation = self._live(escalation_id)
        if escalation["acknowledgedBy"] is None:
            escalation.update(status="acknowledged", acknowledgedBy=self.user, acknowledgedAt=self._now())
            self._record(escalation, "acknowledged")
        return copy.deepcopy(escalation)

    async def decide(
        self, escalation_id: str, *, choice: str, reason: str | None = None, response: dict | None = None
    ) -> dict:
        escalation = self._live(escalation_id)
        resolution = {"choice": choice, "reason": reason, "resolvedBy": "human", "answeredBy": self.user}
        if response is not None:
            resolution["response"] = response
        escalation.update(status="resolved", resolution={**resolution, "answeredAt": self._now()})
        self._record(escalation, "decided")
        return copy.deepcopy(escalation)

    async def cancel(self, escalation_id: str, *, reason: str | None = None) -> dict:
        escalation = self._live(escalation_id)
        cancellation = {"reason": reason, "cancelledBy": self.user, "cancelledAt": self._now()}
        escalation.update(status="cancelled", cancellation=cancellation)
        self._record(escalation, "cancelled")
        return copy.deepcopy(escalation)

    async def deliveries(self, escalation_id: str) -> list[dict]:
        self._find(escalation_id)
        return copy.deepcopy(self._deliveries.get(escalation_id, []))

    async def retry_delivery(self, escalation_id: str) -> dict:
        self._find(escalation_id)
        raise ApiError(404, code="not_found", title="Not found", detail="no callback to retry")

    async def events(self, *, on_connect: Callable[[], Any] | None = None) -> AsyncIterator[Event]:
        # No push source: park until the app cancels the worker.
        await asyncio.Event().wait()
        yield  # pragma: no cover - makes this an async generator

    async def close(self) -> None:
        return None

    def _now(self) -> str:
        return format_ms(self._clock())

    def _find(self, escalation_id: str) -> dict:
        try:
            return self._escalations[escalation_id]
        except KeyError:
            raise ApiError(404, code="not_found", title="Not found", detail=f"no escalation {escalation_id}") from None

    def _live(self, escalation_id: str) -> dict:
        escalation = self._find(escalation_id)
        if escalation["status"] not in LIVE:
            detail = f"escalation is {escalation['status']}"
            raise ApiError(409, code="invalid_state", title="Invalid state", detail=detail)
        return escalation

    def _record(self, escalation: dict, event: str) -> None:
        escalation["history"].append({"event": event, "by": self.user, "at": self._now()})


# SLA per demo policy, in seconds (None: no SLA). demo.quick is short so a
# newcomer sees a breach resolve itself with the default choice.
POLICY_SLA_S: dict[str, float | None] = {"demo.refunds": 15 * 60, "demo.access": None, "demo.quick": 60}


def resource(request: dict, *, index: int, created_ms: int, sla_s: float | None) -> dict:
    """The escalation the server would return for ``request``, with a fixed id."""
    created = format_ms(created_ms)
    return {
        "id": f"esc_sample{index:02d}",
        "status": "open",
        "policy": request["policy"],
        "agentId": request["agent_id"],
        "runId": request["run_id"],
        "subject": request["subject"],
        "question": request["question"],
        "evidence": request["evidence"],
        "choices": request["choices"],
        "responseFields": request.get("response_fields", []),
        "resume": {"mode": "webhook", "url": "http://127.0.0.1:9000/resume", "signed": True},
        "createdAt": created,
        "deadlineAt": None if sla_s is None else format_ms(created_ms + int(sla_s * 1000)),
        "acknowledgedBy": None,
        "acknowledgedAt": None,
        "resolution": None,
        "cancellation": None,
        "history": [{"event": "created", "by": f"key:{request['agent_id']}", "at": created}],
    }


def resources(now_ms: int) -> list[dict]:
    """The samples as if created 12, 7, 50 s and 3 min before ``now_ms``."""
    ages_ms = [12 * 60_000, 7 * 60_000, 50_000, 3 * 60_000]
    return [
        resource(r, index=i + 1, created_ms=now_ms - age, sla_s=POLICY_SLA_S[r["policy"]])
        for i, (r, age) in enumerate(zip(REQUESTS, ages_ms, strict=True))
    ]
