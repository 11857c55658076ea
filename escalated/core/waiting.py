"""Waiting for an escalation to be resolved or cancelled, without polling:
what ``GET /escalations/{id}/wait`` and the MCP tool ``get_decision`` do."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from escalated.core.service import Service
from escalated.domain.models import TERMINAL_STATUSES, Escalation, Principal


async def until_done(
    service: Service,
    principal: Principal,
    escalation_id: str,
    *,
    timeout_s: Callable[[], float],
) -> Escalation:
    """The escalation once resolved or cancelled, or as it is when the timeout passes.

    Subscribes before reading, so a change between the two is not missed,
    and reads again only after a change. ``timeout_s`` is asked after the
    first read, so an unknown id is a 404 before a bad timeout is a 422.
    """
    change = service.bus.next_change(escalation_id)
    try:
        esc = await service.get(principal, escalation_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s()
        while esc.status not in TERMINAL_STATUSES and (remaining := deadline - loop.time()) > 0:
            try:
                await asyncio.wait_for(asyncio.shield(change), remaining)
            except TimeoutError:
                break  # nothing changed, so esc is still current
            change = service.bus.next_change(escalation_id)
            esc = await service.get(principal, escalation_id)
        return esc
    finally:
        service.bus.forget(escalation_id, change)
