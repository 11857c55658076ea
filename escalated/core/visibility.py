"""Which bus events a stream's principal may see.

An escalation's workspace and routes are fixed when it is created, except
that each escalation level reached adds routes (CONTRACT §15), so a stream
asks the store once per escalation and level and remembers the answer; the
API's ``/events`` and the web app's ``/app/events`` both filter through it.
"""

from __future__ import annotations

from escalated.core.service import Service
from escalated.domain.models import Escalation, Principal

# Bounded per stream: a long-lived stream forgets and asks again.
MAX_REMEMBERED = 10_000


class Visibility:
    def __init__(self, service: Service, principal: Principal) -> None:
        self._service = service
        self._principal = principal
        self._seen: dict[tuple[str, int], bool] = {}

    async def sees(self, escalation: Escalation) -> bool:
        if escalation.workspace_id != self._principal.workspace_id:
            return False
        if self._principal.routes is None:
            return True
        key = (escalation.id, escalation.level)
        if key not in self._seen:
            if len(self._seen) >= MAX_REMEMBERED:
                self._seen.clear()
            self._seen[key] = await self._service.can_see(self._principal, escalation)
        return self._seen[key]
