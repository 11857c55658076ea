"""Start and stop the engine (SLA clock, sender) with the web app (aiohttp ``cleanup_ctx``).

Named tasks, one stop event, and a monitor: if the clock or the sender dies
unexpectedly the whole process stops (and a supervisor restarts it, with
nothing lost: the state is in SQLite), rather than serving without a clock.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

from aiohttp import web

from escalated.engine.clock import SlaClock
from escalated.engine.sender import Sender
from escalated.http.appkeys import CLOCK, DECISION_LINKS, METRICS, SENDER, SERVICE

log = logging.getLogger(__name__)


def _stop_process_when_dead(task: asyncio.Task) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.critical("%s died: %r; stopping the server", task.get_name(), exc)
        os.kill(os.getpid(), signal.SIGTERM)


async def engine_ctx(app: web.Application):
    service = app[SERVICE]
    clock = SlaClock(service)
    stop = asyncio.Event()
    async with Sender(service, metrics=app[METRICS], links=app[DECISION_LINKS]) as sender:
        app[CLOCK] = clock
        app[SENDER] = sender
        service.bus.add_listener(clock.on_event)
        service.on_deliveries(sender.wake)
        tasks = [
            asyncio.create_task(service.store.lead(stop, lambda: clock.lead(stop)), name="sla-clock"),
            asyncio.create_task(sender.run(stop), name="outbox-sender"),
            asyncio.create_task(service.store.follow(stop, service.on_change), name="change-feed"),
        ]
        for task in tasks:
            task.add_done_callback(_stop_process_when_dead)
        try:
            yield
        finally:
            stop.set()
            for task in tasks:
                task.remove_done_callback(_stop_process_when_dead)
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
