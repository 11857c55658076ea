"""The outbox sender: delivers callbacks and notifications, at least once.

It wakes when new work is committed (no polling delay), otherwise sleeps
until the earliest due retry; with more due than it may start, it waits for
an attempt to finish. A receiver is its scheme, host and port, and each has
its own share (``sender_per_host`` attempts at once): deliveries to a
receiver that already has its share in flight wait in the outbox, and no
share is taken from a pool the others need (the overall bound,
``sender_concurrency``, bounds sockets, far above what hung receivers hold),
so a hung receiver, another port of the same host included, never queues
in front of a healthy one. A receiver that keeps failing is paused
(breaker.py). A delivery is never in flight twice in this process. A row
stays ``pending`` until its attempt is recorded, so a crash mid-send means
it is sent again after restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import Counter
from collections.abc import Callable

import aiohttp

from escalated.core.decisionlinks import DecisionLinks, EmailPlan
from escalated.core.service import Service
from escalated.domain.models import DELIVERED, FAILED, PENDING, Attempt, Delivery
from escalated.engine import transport
from escalated.engine.breaker import Breakers
from escalated.engine.retry import next_attempt_ms
from escalated.errors import TRANSIENT
from escalated.core.metrics import Metrics
from escalated.timeutil import format_opt, now_ms

log = logging.getLogger(__name__)
IDLE_WAKE_S = 30.0  # also catches rows written by another process
# How far past deliveries to busy receivers one pass looks for startable ones.
SCAN_PAST_BUSY = 256
# Due deliveries a pass skipped because their receiver has its share in
# flight are left out of the next reads (until that receiver finishes an
# attempt), so the next pass reads further: a backlog of any length to hung
# receivers never hides a healthy one's delivery behind it. At most this
# many ids are kept out (each read sends them to the database).
MAX_PARKED = 4096
# Attempts started per HTTP slot of a receiver: the rest of an attempt,
# recording it, waits on the group commit, so a slot's next attempt is
# already queued behind it. A hung receiver queues at most this many per
# slot of its own share, never in front of another receiver.
QUEUED_PER_SLOT = 4
# Rows one pass reads for startable deliveries (plus SCAN_PAST_BUSY when
# receivers are at their share); a full read is followed by another pass.
HEAD_ROWS = 64
# A claim (on PostgreSQL, where replicas share the outbox) is a lease: the
# attempt's timeout plus a margin for committing the claim before it and
# the record after it (milliseconds on a healthy database). A replica killed
# mid-attempt leaves the delivery to the others when the lease ends, so the
# margin is what such a crash adds to a callback's delay.
LEASE_MARGIN_S = 5.0
# An email or desktop notification does not end within --delivery-timeout
# (transport.ends_within_timeout): its lease keeps a long margin, so that a
# slow SMTP server does not get the email twice, each with its own links.
UNBOUNDED_LEASE_MARGIN_S = 30.0
# After losing a claim to another replica: when to read the outbox again. By
# then the winner's claim has committed, and the head shows when its lease
# ends (the time to try again if that replica dies mid-attempt); without the
# look, the next could be IDLE_WAKE_S away, past the lease.
LOST_CLAIM_LOOK_S = 0.2
# While the outbox cannot be read: read it again after this long, doubling
# up to the cap (what an outage adds to a callback once the database is back).
OUTBOX_RETRY_FIRST_S = 0.25
OUTBOX_RETRY_MAX_S = 2.0


class Sender:
    def __init__(
        self,
        service: Service,
        *,
        metrics: Metrics,
        rng: random.Random | None = None,
        links: DecisionLinks | None = None,
        breakers: Breakers | None = None,
        now: Callable[[], int] = now_ms,
    ) -> None:
        self._service = service
        self._now = now  # epoch ms; tests pass a clock they move (no test waits out a backoff)
        self._links = links  # email decision links, minted per attempt (core/decisionlinks.py)
        self._settings = service.settings
        self._metrics = metrics
        self._rng = rng or random.Random()
        self._wake = asyncio.Event()
        self._in_flight: dict[str, asyncio.Task] = {}
        self._per_origin: Counter[str] = Counter()  # attempts started per receiver, not yet recorded
        self._origin_slots: dict[str, asyncio.Semaphore] = {}  # HTTP attempts at once, per receiver
        self._parked: dict[str, set[str]] = {}  # due, skipped for a receiver at its share: left out of reads
        self._breakers = breakers or Breakers()  # receivers that keep failing are paused
        self._session: aiohttp.ClientSession | None = None
        self._next_due_ms: int | None = None  # the earliest pending delivery not yet due
        self._backlog = False  # more is due than the last pass could start
        # Whether a pass should read past deliveries to receivers at their cap:
        # not again until new work comes, after a look found nothing behind them.
        self._look_past_busy = True
        self._wakes = 0  # new work signalled so far (a look that raced with new work proves nothing)
        self._look_again: asyncio.TimerHandle | None = None  # after a lost claim

    def wake(self) -> None:
        self._look_past_busy = True
        self._wakes += 1
        self._wake.set()

    def retried_by_hand(self, delivery: Delivery) -> None:
        """A retry by hand is let through its receiver's pause at once, as its probe."""
        self._breakers.probe_now(transport.origin(delivery), self._now())

    async def __aenter__(self) -> Sender:
        self._session = transport.open_session(rules=self._settings.callback_rules, limit=self._settings.sender_concurrency)
        return self

    async def __aexit__(self, *exc) -> None:
        if self._look_again is not None:
            self._look_again.cancel()
        for task in list(self._in_flight.values()):
            task.cancel()
        await asyncio.gather(*self._in_flight.values(), return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    async def run(self, stop: asyncio.Event) -> None:
        retry_s = 0.0  # while the outbox cannot be read
        while not stop.is_set():
            self._wake.clear()
            try:
                await self.dispatch(self._now())
            except TRANSIENT as exc:
                if not retry_s:  # one line per outage
                    log.warning("cannot read the outbox (%s); trying again with backoff", exc.detail)
                retry_s = min(OUTBOX_RETRY_MAX_S, retry_s * 2 or OUTBOX_RETRY_FIRST_S)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), retry_s)
                continue
            if retry_s:
                log.warning("the outbox can be read again")
                retry_s = 0.0
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self._sleep_s())
            except TimeoutError:
                self._look_past_busy = True  # retries came due

    def _sleep_s(self) -> float:
        if self._next_due_ms is None:
            return IDLE_WAKE_S  # a finishing attempt or new work wakes us
        return min(IDLE_WAKE_S, max(0.0, (self._next_due_ms - self._now()) / 1000))

    async def dispatch(self, at_ms: int) -> list[asyncio.Task]:
        """Start attempts for every due delivery (bounded); return their tasks."""
        free = self._settings.sender_concurrency * QUEUED_PER_SLOT - len(self._in_flight)
        if free <= 0:
            self._backlog = True
            return []
        cap = self._settings.sender_per_host * QUEUED_PER_SLOT
        past_busy = self._look_past_busy and any(n >= cap for n in self._per_origin.values())
        wakes = self._wakes
        limit = min(free, HEAD_ROWS) + 1 + (SCAN_PAST_BUSY if past_busy else 0)
        head = await self._service.pending_deliveries(limit=limit, exclude=set(self._in_flight).union(*self._parked.values()))
        started: list[asyncio.Task] = []
        paused: list[Delivery] = []  # due, to receivers the breaker holds back
        parked = 0  # newly left out of the next reads
        self._next_due_ms, self._backlog = None, len(head) == limit  # rows past the scan may be due
        for delivery in head:
            assert delivery.next_attempt_ms is not None  # a pending delivery has its next attempt's time
            if delivery.next_attempt_ms > at_ms:
                self._next_due_ms = delivery.next_attempt_ms
                break
            if len(started) == free:
                self._backlog = True  # a finishing attempt wakes us
                break
            origin = transport.origin(delivery)
            if self._per_origin[origin] >= cap:
                self._backlog = True
                parked += self._park(origin, delivery)
                continue
            if not self._breakers.may_start(origin, at_ms):
                paused.append(delivery)
                continue
            started.append(self._start(delivery, origin, probe=self._breakers.probing(origin)))
        moved = await self._defer(paused, at_ms)
        if past_busy and not started and not parked and wakes == self._wakes:
            self._look_past_busy = False
        if len(head) == limit and (started or parked or (paused and moved)):
            self._wake.set()  # more may be due past this read: another pass, not a wait for a finishing attempt
        return started

    def _park(self, origin: str, delivery: Delivery) -> int:
        if sum(len(ids) for ids in self._parked.values()) >= MAX_PARKED:
            return 0
        self._parked.setdefault(origin, set()).add(delivery.id)
        return 1

    async def _defer(self, deliveries: list[Delivery], at_ms: int) -> bool:
        """Move a paused receiver's due deliveries past its pause, out of the
        outbox's head (where enough of them would hide other receivers' work);
        whether they all moved."""
        by_until: dict[int, list[Delivery]] = {}
        for delivery in deliveries:
            until = self._breakers.not_before_ms(transport.origin(delivery), at_ms)
            by_until.setdefault(until, []).append(delivery)
        for until_ms, group in by_until.items():
            try:
                await self._service.defer_deliveries(group, until_ms=until_ms)
            except TRANSIENT:  # held back again on the next pass
                return False
            if self._next_due_ms is None or until_ms < self._next_due_ms:
                self._next_due_ms = until_ms  # wake for the probe
        return True

    def _start(self, delivery: Delivery, origin: str, *, probe: bool = False) -> asyncio.Task:
        if origin not in self._origin_slots:
            self._origin_slots[origin] = asyncio.Semaphore(self._settings.sender_per_host)
        task = asyncio.create_task(self._deliver(delivery, origin, probe=probe), name=f"deliver-{delivery.id}")
        self._in_flight[delivery.id] = task
        self._per_origin[origin] += 1
        did = delivery.id
        task.add_done_callback(lambda _t: self._finished(did, origin))
        return task

    def _finished(self, delivery_id: str, origin: str) -> None:
        self._in_flight.pop(delivery_id, None)
        # It has room again: what it parked is read again, by a pass started
        # now (a pass that saw only parked rows left out knows of no backlog).
        unparked = self._parked.pop(origin, None)
        self._per_origin[origin] -= 1
        if self._per_origin[origin] <= 0:
            del self._per_origin[origin]
            del self._origin_slots[origin]
        if self._backlog or unparked:
            self._wake.set()

    async def drain(self, at_ms: int | None = None) -> int:
        """Deliver everything due now and wait for it (tests and shutdown)."""
        tasks = await self.dispatch(self._now() if at_ms is None else at_ms)
        await asyncio.gather(*tasks)
        return len(tasks)

    async def _deliver(self, delivery: Delivery, origin: str, *, probe: bool) -> None:
        async with self._origin_slots[origin]:  # the receiver's own share, nobody else's
            if not probe and self._breakers.is_paused(origin):  # paused while this one queued
                self._wake.set()  # it stays pending; the next pass moves it past the pause
                return
            tried = await self._attempt_claimed(delivery)
        if tried is None:
            if probe:
                self._breakers.forget(origin)  # not made: the next delivery probes
            return
        outcome, token = tried
        at_ms = self._now()
        self._count(delivery, origin, outcome, at_ms)
        attempt = Attempt(at_ms=at_ms, duration_ms=outcome.duration_ms, status_code=outcome.status_code, error=outcome.error)
        status, next_ms = self._after(delivery, outcome, at_ms)
        try:
            await self._service.record_attempt(
                delivery, attempt=attempt, status=status, next_attempt_ms=next_ms, token=token
            )
        except TRANSIENT as exc:
            # Not recorded: the delivery stays pending and is sent again (at
            # least once, same id). The writer has logged why, once a minute.
            log.debug("escalation %s: attempt of %s not recorded (%s)", delivery.escalation_id, delivery.id, exc.code)
            return
        self._metrics.delivery_attempts.labels(delivery.kind, "ok" if outcome.ok else "failed").inc()
        if status == FAILED:
            self._metrics.deliveries_failed.inc()
            log.warning(
                "escalation %s: %s delivery %s failed for good: %s",
                delivery.escalation_id, delivery.kind, delivery.id, outcome.error,
            )  # fmt: skip
        elif status == PENDING:
            # RFC 3339, not epoch ms: an operator reads these lines, not a program.
            log.info(
                "escalation %s: %s delivery %s attempt %d failed (%s); next try at %s",
                delivery.escalation_id, delivery.kind, delivery.id, len(delivery.attempts) + 1, outcome.error,
                format_opt(next_ms),
            )  # fmt: skip
            self.wake()

    async def _attempt_claimed(self, delivery: Delivery) -> tuple[transport.Outcome, int | None] | None:
        """One attempt under a claim: its outcome and the claim's fencing token;
        None when not attempted (another replica claimed it, or the database
        could not record the claim or the email's links: it stays pending)."""
        # Claimed under the slots, so the lease covers this attempt only.
        try:
            lease_ms = self._lease_ms(delivery)
            claims = await self._service.claim_deliveries([delivery], at_ms=self._now(), lease_ms=lease_ms)
            if delivery.id not in claims:
                self._look_again_soon()
                return None
            plan = await self._email_plan(delivery)
        except TRANSIENT:  # tried again on a later pass
            return None
        assert self._session is not None, "the sender is started before it sends"
        outcome = await transport.attempt(
            delivery,
            session=self._session,
            timeout_s=self._settings.delivery_timeout_s,
            rules=self._settings.callback_rules,
            mail_server=self._settings.mail_server,
            email_plan=plan,
        )
        return outcome, claims[delivery.id]

    def _count(self, delivery: Delivery, origin: str, outcome: transport.Outcome, at_ms: int) -> None:
        """The breaker counts what a receiver did: an HTTP attempt's outcome,
        unless the target was refused before any receiver was asked."""
        if not transport.ends_within_timeout(delivery) or (outcome.permanent and outcome.status_code is None):
            return
        change = self._breakers.record(origin, ok=outcome.ok, at_ms=at_ms)
        if change is not None and change.paused:
            log.warning(
                "receiver %s paused until %s after %d failed attempts in a row; its deliveries wait (circuit breaker)",
                origin, format_opt(change.until_ms), change.failures,
            )  # fmt: skip
        elif change is not None:
            log.warning("receiver %s answers again; resumed", origin)
            self.wake()  # what waited for it is due

    def _look_again_soon(self) -> None:
        if self._look_again is None:
            self._look_again = asyncio.get_running_loop().call_later(LOST_CLAIM_LOOK_S, self._looked_again)

    def _looked_again(self) -> None:
        self._look_again = None
        self._wake.set()

    def _lease_ms(self, delivery: Delivery) -> int:
        margin_s = LEASE_MARGIN_S if transport.ends_within_timeout(delivery) else UNBOUNDED_LEASE_MARGIN_S
        return int((self._settings.delivery_timeout_s + margin_s) * 1000)

    async def _email_plan(self, delivery: Delivery) -> EmailPlan | None:
        """Under this attempt's claim, so two replicas never mint for one email."""
        if self._links is None or not delivery.target.startswith("email:") or self._settings.mail_server is None:
            return None
        return await self._links.plan_email(delivery)

    def _after(self, delivery: Delivery, outcome: transport.Outcome, at_ms: int) -> tuple[str, int | None]:
        if outcome.ok:
            return DELIVERED, None
        if outcome.permanent:
            return FAILED, None
        when = next_attempt_ms(
            attempts_made=len(delivery.attempts) + 1,
            window_start_ms=delivery.created_ms,
            at_ms=at_ms,
            schedule_s=self._settings.retry_schedule_s,
            retry_for_s=self._settings.retry_for_s,
            retry_after_s=outcome.retry_after_s,
            rng=self._rng,
        )
        return (FAILED, None) if when is None else (PENDING, when)
