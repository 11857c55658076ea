"""In-process fan-out of committed changes.

Publishing happens only after the commit that made the change, so a
listener never sees something that could still roll back. Listeners are
the SLA clock (arm deadlines), the sender (wake up), ``wait`` callers and
``/events`` streams.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import msgspec

from escalated.domain.models import Escalation

log = logging.getLogger(__name__)
STREAM_QUEUE_SIZE = 1000


# Built on every create: a Struct, as the escalation it carries (domain/models.py).
class BusEvent(msgspec.Struct, frozen=True, gc=False):
    seq: int
    event: str  # escalation.created | acknowledged | decided | breached | cancelled
    at_ms: int
    escalation: Escalation
    deliveries: int = 0  # outbox rows committed with this change (wakes the sender)


class EventBus:
    def __init__(self) -> None:
        self._seq = 0
        self._listeners: list[Callable[[BusEvent], None]] = []
        self._streams: set[asyncio.Queue[BusEvent]] = set()
        self._waiters: dict[str, set[asyncio.Future[BusEvent]]] = {}

    def add_listener(self, listener: Callable[[BusEvent], None]) -> None:
        self._listeners.append(listener)

    def publish(
        self, event: str, escalation: Escalation, at_ms: int, *, deliveries: int = 0, seq: int | None = None
    ) -> BusEvent:
        """``seq``: the database's event number, when the store's change feed
        numbers events (several processes); else the next of this process."""
        self._seq = self._seq + 1 if seq is None else seq
        item = BusEvent(self._seq, event, at_ms, escalation, deliveries)  # by position: no keywords' dict per event
        for listener in self._listeners:
            try:
                listener(item)
            except Exception:  # one broken listener must not stop the others
                log.exception("bus listener failed on %s", event)
        for queue in self._streams:
            if queue.full():
                queue.get_nowait()  # a slow stream loses its oldest event, not the server's memory
            queue.put_nowait(item)
        for future in self._waiters.pop(escalation.id, ()):
            if not future.done():
                future.set_result(item)
        return item

    def stream(self) -> asyncio.Queue[BusEvent]:
        queue: asyncio.Queue[BusEvent] = asyncio.Queue(STREAM_QUEUE_SIZE)
        self._streams.add(queue)
        return queue

    def close_stream(self, queue: asyncio.Queue[BusEvent]) -> None:
        self._streams.discard(queue)

    def next_change(self, escalation_id: str) -> asyncio.Future[BusEvent]:
        """A future resolved by the next event of this escalation."""
        future: asyncio.Future[BusEvent] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(escalation_id, set()).add(future)
        return future

    def forget(self, escalation_id: str, future: asyncio.Future[BusEvent]) -> None:
        waiters = self._waiters.get(escalation_id)
        if waiters is not None:
            waiters.discard(future)
            if not waiters:
                del self._waiters[escalation_id]
