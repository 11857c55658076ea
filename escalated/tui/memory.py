"""An in-memory backend holding fixed escalations.

For the snapshot tests and ``docs/screenshots/make.py``, where the picture
must not depend on ids, clocks or a server. It keeps the server's state rules
(409 once resolved or cancelled) so the UI behaves the same; it sends no
callbacks and streams no events (the app's poll picks up changes).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable
from typing import Any

from escalated.client import ApiError, Event
from escalated.timeutil import format_ms, now_ms

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
