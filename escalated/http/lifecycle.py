"""Start and stop the engine (SLA clock, sender) with the web app (aiohttp ``cleanup_ctx``).

Named tasks, one stop event, and a monitor: if the clock or the sender dies
unexpectedly the whole process stops, with a non-zero exit status (a
supervisor restarts it, with nothing lost: the state is in the database),
rather than serving without a clock. A database that goes away for a while
is not such a death: each task waits for it and goes on (docs/CONTRACT.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from functools import partial

import attrs
from aiohttp import web

from escalated.engine.clock import SlaClock
from escalated.engine.sender import Sender
from escalated.http.appkeys import CLOCK, DECISION_LINKS, METRICS, SENDER, SERVICE

log = logging.getLogger(__name__)


@attrs.define
class EngineHealth:
    """Why the engine stopped the server, if it did: ``serve`` exits 1 then,
    so a supervisor sees a failure rather than a clean stop."""

    died: str | None = None  # e.g. "outbox-sender died: RuntimeError(...)"


# Here, not in appkeys.py: that module's keys are read by handlers; this one by ``serve`` only.
ENGINE_HEALTH = web.AppKey("engine_health", EngineHealth)


def _stop_process_when_dead(health: EngineHealth, task: asyncio.Task) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        health.died = f"{task.get_name()} died: {exc!r}"
        log.critical("%s; stopping the server", health.died)
        os.kill(os.getpid(), signal.SIGTERM)


async def engine_ctx(app: web.Application):
    service = app[SERVICE]
    health = app[ENGINE_HEALTH] = EngineHealth()
    stop_when_dead = partial(_stop_process_when_dead, health)
    clock = SlaClock(service, now=service.clock)
    app[METRICS].deadlines_armed.set_function(lambda: clock.armed)  # read at each scrape
    stop = asyncio.Event()
    async with Sender(service, metrics=app[METRICS], links=app[DECISION_LINKS], now=service.clock) as sender:
        app[CLOCK] = clock
        app[SENDER] = sender
        service.bus.add_listener(clock.on_event)
        service.on_deliveries(sender.wake)
        service.on_retry_by_hand(sender.retried_by_hand)
        tasks = [
            asyncio.create_task(service.store.lead(stop, lambda: clock.lead(stop)), name="sla-clock"),
            asyncio.create_task(sender.run(stop), name="outbox-sender"),
            asyncio.create_task(service.store.follow(stop, service.on_change), name="change-feed"),
        ]
        for task in tasks:
            task.add_done_callback(stop_when_dead)
        try:
            yield
        finally:
            stop.set()
            for task in tasks:
                task.remove_done_callback(stop_when_dead)
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
