"""A circuit breaker per receiver: one that keeps failing is paused, then probed.

As Stripe and Svix do for webhook endpoints: once ``FAILURES_TO_OPEN``
attempts in a row have failed (an error status, a timeout, a refused or
reset connection) over at least ``FAILING_FOR_MS`` (a receiver that fails
now and then, or is down for a few seconds, is not paused), the receiver
(scheme, host and port) is paused for ``FIRST_PAUSE_MS``. Its deliveries stay pending, moved past the pause
(``Store.defer_deliveries``), so they neither hold the sender's capacity
nor sit at the head of the outbox. When the pause ends one delivery is let
through as a probe: if it succeeds the receiver is resumed and everything
owed to it goes; if it fails the pause doubles, up to ``MAX_PAUSE_MS``.
A success at any time resumes it. Pausing never fails a delivery: each
keeps its own retry window (``--retry-for``), and an attempt is recorded
only when one is made.

Pure: time is an argument. State is per process (each replica pauses on
what it saw itself), and lost on restart, which at worst costs a receiver
``FAILURES_TO_OPEN`` more failed attempts.
"""

from __future__ import annotations

import attrs

FAILURES_TO_OPEN = 10
FAILING_FOR_MS = 30_000
FIRST_PAUSE_MS = 30_000
MAX_PAUSE_MS = 600_000
# While a probe is in flight the receiver's other deliveries are looked at
# again this often: soon after a probe that succeeds, they go.
PROBE_LOOK_MS = 1_000


@attrs.define
class _State:
    failures: int = 0  # in a row
    failing_since_ms: int = 0  # the first of them
    paused_until_ms: int | None = None
    pause_ms: int = 0
    probing: bool = False  # the one attempt let through after a pause is in flight


@attrs.frozen
class Change:
    """A receiver paused or resumed: what the sender logs."""

    origin: str
    paused: bool
    until_ms: int | None = None
    failures: int = 0


class Breakers:
    def __init__(
        self,
        *,
        failures_to_open: int = FAILURES_TO_OPEN,
        failing_for_ms: int = FAILING_FOR_MS,
        first_pause_ms: int = FIRST_PAUSE_MS,
        max_pause_ms: int = MAX_PAUSE_MS,
    ) -> None:
        self._failures_to_open = failures_to_open
        self._failing_for_ms = failing_for_ms
        self._first_pause_ms = first_pause_ms
        self._max_pause_ms = max_pause_ms
        self._states: dict[str, _State] = {}

    def paused(self) -> dict[str, int]:
        """Receivers paused now, with when each pause ends."""
        return {o: s.paused_until_ms for o, s in self._states.items() if s.paused_until_ms is not None}

    def may_start(self, origin: str, at_ms: int) -> bool:
        """Whether an attempt to ``origin`` may start now; after a pause the
        first caller gets the probe (and must ``record`` its outcome)."""
        state = self._states.get(origin)
        if state is None or state.paused_until_ms is None:
            return True
        if state.probing or at_ms < state.paused_until_ms:
            return False
        state.probing = True
        return True

    def is_paused(self, origin: str) -> bool:
        state = self._states.get(origin)
        return state is not None and state.paused_until_ms is not None

    def probing(self, origin: str) -> bool:
        state = self._states.get(origin)
        return state is not None and state.probing

    def not_before_ms(self, origin: str, at_ms: int) -> int:
        """When to look at a refused delivery again: the pause's end, or
        shortly while the probe is in flight (it may succeed at once)."""
        state = self._states[origin]
        if state.probing or state.paused_until_ms is None:
            return at_ms + PROBE_LOOK_MS
        return max(state.paused_until_ms, at_ms + 1)

    def record(self, origin: str, *, ok: bool, at_ms: int) -> Change | None:
        """An attempt's outcome; the change it made, if it paused or resumed the receiver."""
        state = self._states.setdefault(origin, _State())
        was_paused = state.paused_until_ms is not None
        if ok:
            del self._states[origin]
            return Change(origin, paused=False) if was_paused else None
        if state.failures == 0:
            state.failing_since_ms = at_ms
        state.failures += 1
        if state.probing:  # the probe failed: pause again, longer
            state.probing = False
            state.pause_ms = min(self._max_pause_ms, state.pause_ms * 2)
        elif was_paused:
            return None  # attempts begun before the pause, ending now, change nothing
        elif state.failures < self._failures_to_open or at_ms - state.failing_since_ms < self._failing_for_ms:
            return None
        else:
            state.pause_ms = self._first_pause_ms
        state.paused_until_ms = at_ms + state.pause_ms
        return Change(origin, paused=True, until_ms=state.paused_until_ms, failures=state.failures)

    def probe_now(self, origin: str, at_ms: int) -> None:
        """End a pause early (a retry by hand): the next attempt is its probe."""
        state = self._states.get(origin)
        if state is not None and state.paused_until_ms is not None and not state.probing:
            state.paused_until_ms = min(state.paused_until_ms, at_ms)

    def forget(self, origin: str) -> None:
        """A probe that was not made (claimed elsewhere, the database busy): let the next one through."""
        state = self._states.get(origin)
        if state is not None:
            state.probing = False
