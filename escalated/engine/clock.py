"""The SLA clock: a bounded near-term window of deadlines, refilled from the
database's deadline index.

Only deadlines up to ``horizon_ms`` live in memory; later ones stay in
SQLite until the horizon moves. Each armed deadline is one int in a heap,
``deadline_ms`` above the id's bytes (see ``_entry``): ~75 bytes apiece,
against ~180 for a ``(deadline_ms, id)`` tuple with its str and ~340 for an
asyncio TimerHandle (benchmarks/clock_bench.py).
So a million open escalations cost a few queries, not a million timer
handles. The window is rebuilt from the database at start-up, which also
breaches, in deadline order, everything that passed while the server was
down. Time is an argument everywhere; ``run`` is the only place that reads
the clock.

The same loop sends reminders and reaches escalation levels (CONTRACT §15).
Those need no heap: the database indexes each open escalation's next one
(``nudge_ms``), and the clock keeps only the earliest, read again after
every pass that wrote some, at every sweep and when it starts to lead. A
restarted clock therefore owes nothing to memory: what came due while the
server was down is sent on its first pass.

A breach whose write fails (disk full, the write lock held elsewhere) goes
back into the heap and is tried again with backoff until it commits. And
every ``sweep_ms`` the clock reads the live escalations already past their
deadline from the index, so one is breached even if the heap lost it.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable

from escalated.core.bus import BusEvent
from escalated.core.service import Service
from escalated.errors import TRANSIENT, log_failure
from escalated.timeutil import now_ms

log = logging.getLogger(__name__)
WINDOW_MS = 120_000
ID_BYTES = 32  # escalation ids are "esc_" + a 26-character ULID: 30 bytes
_ID_BITS = 8 * ID_BYTES
_ID_MASK = (1 << _ID_BITS) - 1


def _entry(deadline_ms: int, escalation_id: str) -> int:
    """One int that sorts by deadline, then id; no tuple, no str kept."""
    raw = escalation_id.encode()
    if len(raw) > ID_BYTES:
        raise ValueError(f"escalation id longer than {ID_BYTES} bytes: {escalation_id!r}")
    return (deadline_ms << _ID_BITS) | int.from_bytes(raw, "big")


def _deadline_ms(entry: int) -> int:
    return entry >> _ID_BITS


def _escalation_id(entry: int) -> str:
    return (entry & _ID_MASK).to_bytes(ID_BYTES, "big").lstrip(b"\0").decode()


REFILL_BATCH = 50_000
# One write job per batch, and write jobs run on the event loop (see
# the SQLite writer): 500 resolutions keep a catch-up batch to a few tens of ms.
BREACH_BATCH = 500
# After a failed breach write or deadline read: wait, doubling, up to the
# cap, until one succeeds. The cap is what a database outage adds to breach
# lateness once the database is back (a retry costs one statement).
RETRY_FIRST_MS = 500
RETRY_MAX_MS = 2_000
SWEEP_MS = 60_000
# Creations younger than this are left to the create's own rule decision
# (``ReviewerOps.answer_new``, right after its commit); the sweeps' windows
# overlap by as much, for a create whose commit came late after its clock read.
RULE_GRACE_MS = 2_000
NO_NUDGE = 1 << 62  # the earliest reminder or level when there is none


class SlaClock:
    def __init__(
        self,
        service: Service,
        *,
        window_ms: int = WINDOW_MS,
        refill_batch: int = REFILL_BATCH,
        sweep_ms: int = SWEEP_MS,
        now: Callable[[], int] = now_ms,
    ) -> None:
        self._service = service
        self._now = now  # epoch ms, read once per pass by run; tests pass a clock they move
        self._window_ms = window_ms
        self._refill_batch = refill_batch
        self._sweep_ms = sweep_ms
        self._heap: list[int] = []  # _entry(deadline_ms, id)
        self._horizon_ms: int | None = None  # every live deadline <= horizon is in the heap
        self._loading_to_ms: int | None = None  # the target of a refill under way
        self._next_sweep_ms: int | None = None
        self._retry_ms = 0  # the current backoff; 0 while breaches commit
        self._retry_at_ms: int | None = None  # no breach is tried before this
        self._nudge_ms: int | None = None  # the earliest reminder or level; None: read it from the database
        # The earliest of escalations created since that read began: a create
        # committed after the read must not be overwritten by its answer.
        self._nudge_floor = NO_NUDGE
        self._rules_since_ms = 0  # creations before this were checked for missed rule decisions
        self._wake = asyncio.Event()

    @property
    def armed(self) -> int:
        return len(self._heap)

    def wake(self) -> None:
        """Pass again now, reading the clock: after the time it reads moved
        by more than the wall clock (a test's clock), not only when the
        earliest deadline was due by the wall clock's reckoning."""
        self._wake.set()

    def on_event(self, event: BusEvent) -> None:
        """Bus listener: arm new deadlines that fall inside the window."""
        esc = event.escalation
        if event.event == "escalation.created" and esc.deadline_ms is not None:
            self.arm(esc.id, esc.deadline_ms)
        if event.event == "escalation.created" and esc.nudge_ms is not None:
            self._nudge_floor = min(self._nudge_floor, esc.nudge_ms)
            if self._nudge_ms is not None and esc.nudge_ms < self._nudge_ms:
                self._nudge_ms = esc.nudge_ms
                self._wake.set()

    def arm(self, escalation_id: str, deadline_ms: int) -> None:
        # While a refill is reading, its target counts as covered too: a create
        # that commits after the refill's query must not fall between the two.
        # (No list of the two: arm runs on every create.)
        horizon, loading = self._horizon_ms, self._loading_to_ms
        if (horizon is not None and deadline_ms <= horizon) or (loading is not None and deadline_ms <= loading):
            earliest = _deadline_ms(self._heap[0]) if self._heap else None
            heapq.heappush(self._heap, _entry(deadline_ms, escalation_id))
            if earliest is None or deadline_ms < earliest:
                self._wake.set()

    async def refill(self, at_ms: int) -> None:
        """Load live deadlines in (horizon, at + window] from the index."""
        target = at_ms + self._window_ms
        self._loading_to_ms = target
        try:
            while self._horizon_ms is None or self._horizon_ms < target:
                rows = await self._service.due_deadlines(
                    after_ms=self._horizon_ms, until_ms=target, limit=self._refill_batch
                )
                for deadline_ms, escalation_id in rows:
                    heapq.heappush(self._heap, _entry(deadline_ms, escalation_id))
                if len(rows) < self._refill_batch:
                    self._horizon_ms = target
                else:
                    # Stop at the last full millisecond loaded; rows sharing it are re-read, duplicates are harmless.
                    self._horizon_ms = rows[-1][0] - 1
                    if len(self._heap) >= self._refill_batch:
                        break
        finally:
            self._loading_to_ms = None

    async def sweep(self, at_ms: int) -> None:
        """Arm every live escalation already past its deadline, from the index.

        Normally these are in the heap already (duplicates are harmless: a
        breach skips what is no longer live); this catches any the heap lost.
        """
        self._next_sweep_ms = at_ms + self._sweep_ms
        self._nudge_ms = None
        for deadline_ms, escalation_id in await self._service.due_deadlines(
            after_ms=None, until_ms=at_ms, limit=self._refill_batch
        ):
            heapq.heappush(self._heap, _entry(deadline_ms, escalation_id))

    async def tick(self, at_ms: int) -> int:
        """Breach everything due at ``at_ms``, oldest deadline first. Returns how many."""
        if self._retry_at_ms is not None and at_ms < self._retry_at_ms:
            return 0  # backing off after a failed write
        if self._horizon_ms is None:  # the first pass: the refill reads past deadlines too
            self._next_sweep_ms = at_ms + self._sweep_ms
            await self.answer_missed(at_ms)
        elif self._next_sweep_ms is not None and at_ms >= self._next_sweep_ms:
            await self.sweep(at_ms)
            await self.answer_missed(at_ms)
        if self._horizon_ms is None or self._horizon_ms < at_ms + self._window_ms // 2:
            await self.refill(at_ms)
        await self.nudge(at_ms)
        breached = 0
        due_below = (at_ms + 1) << _ID_BITS  # every entry with deadline <= at_ms is smaller
        while self._heap and self._heap[0] < due_below:
            batch: list[int] = []
            while self._heap and self._heap[0] < due_below and len(batch) < BREACH_BATCH:
                batch.append(heapq.heappop(self._heap))
            try:
                done = await self._service.breach_many([_escalation_id(e) for e in batch], at_ms=at_ms)
            except Exception as exc:  # nothing committed: keep every one of them for the retry
                for entry in batch:
                    heapq.heappush(self._heap, entry)
                self._failed(at_ms, exc, pending=len(batch))
                return breached
            self._committed()
            breached += len(done)
            if len(self._heap) < self._refill_batch // 2 and self._horizon_ms is not None and self._horizon_ms < at_ms:
                await self.refill(at_ms)
        return breached

    async def answer_missed(self, at_ms: int) -> int:
        """Make the remembered decisions a stopped process never made
        (``ReviewerOps.answer_missed``) for escalations created since the
        last pass. Returns how many were decided."""
        before_ms = at_ms - RULE_GRACE_MS
        since_ms, decided = self._rules_since_ms, 0
        try:
            while since_ms <= before_ms:
                done, read_on = await self._service.reviewer_ops.answer_missed(
                    since_ms=since_ms, before_ms=before_ms, limit=BREACH_BATCH
                )
                decided += done
                if read_on is None:
                    break
                since_ms = read_on if read_on > since_ms else since_ms + 1  # a full batch of one millisecond: past it
        except Exception as exc:  # the database said no: the next sweep tries the same window again
            log_failure(log, "remembered decisions missed at creation could not be made; retrying at the next sweep", exc)
            return decided
        self._rules_since_ms = max(self._rules_since_ms, before_ms - RULE_GRACE_MS)
        return decided

    async def nudge(self, at_ms: int) -> int:
        """Send the reminders and reach the levels due at ``at_ms``. Returns how many escalations."""
        if self._nudge_ms is not None and at_ms < self._nudge_ms:
            return 0
        self._nudge_floor = NO_NUDGE
        try:
            nudged = await self._service.nudge_due(at_ms)
            earliest = await self._service.next_nudge_ms()
        except Exception as exc:  # the database said no: try again shortly, from the database
            log_failure(log, "reminders and levels failed; retrying", exc)
            self._nudge_ms = at_ms + RETRY_FIRST_MS
            return 0
        self._nudge_ms = min(NO_NUDGE if earliest is None else earliest, self._nudge_floor)
        return nudged

    def _failed(self, at_ms: int, exc: Exception, *, pending: int) -> None:
        first = self._retry_ms == 0
        self._retry_ms = min(RETRY_MAX_MS, self._retry_ms * 2 or RETRY_FIRST_MS)
        self._retry_at_ms = at_ms + self._retry_ms
        if first and pending:  # one line per outage, not one per attempt
            log.error("breach write failed (%s); retrying %d+ due escalations with backoff until it commits", exc, pending)
        elif first:
            log.error("the SLA clock cannot read deadlines (%s); retrying with backoff", exc)

    def _committed(self) -> None:
        if self._retry_ms:
            log.warning("the SLA clock's writes and reads work again")
        self._retry_ms = 0
        self._retry_at_ms = None

    def next_wake_ms(self, at_ms: int) -> int:
        refill_at = (self._horizon_ms or at_ms) - self._window_ms // 2
        wake = min(_deadline_ms(self._heap[0]), refill_at) if self._heap else refill_at
        if self._next_sweep_ms is not None:
            wake = min(wake, self._next_sweep_ms)
        if self._nudge_ms is not None:
            wake = min(wake, self._nudge_ms)
        if self._retry_at_ms is not None:
            wake = max(wake, self._retry_at_ms)
        return wake

    async def lead(self, stop: asyncio.Event) -> None:
        """Run as the one clock of the database (``Store.lead`` decides when).

        A process that leads again forgets its window first, so the first
        pass reads every live deadline from the index, past ones included:
        the start-up catch-up, for whatever fell due while another led.
        """
        self._heap.clear()
        self._horizon_ms = None
        self._retry_ms, self._retry_at_ms = 0, None  # a backoff from before is no reason to wait now
        self._nudge_ms = None
        self._rules_since_ms = 0  # another leader may have stopped mid-window
        await self.run(stop)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self._wake.clear()
            at_ms = self._now()
            try:
                await self.tick(at_ms)
            except TRANSIENT as exc:  # the deadlines could not be read: back off, as after a failed breach
                self._failed(at_ms, exc, pending=0)
            except Exception:  # keep the clock alive; the next pass retries from the database
                log.exception("SLA tick failed")
            else:
                if self._retry_at_ms is not None and at_ms >= self._retry_at_ms:
                    self._committed()  # a whole pass worked: the next failure starts a fresh backoff
            sleep_s = max(0.0, (self.next_wake_ms(self._now()) - self._now()) / 1000)
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=min(sleep_s, 60.0))
            except TimeoutError:
                pass
