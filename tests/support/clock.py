"""The clock a test gives the server (``Settings(clock=...)``): the wall
clock plus an offset the test moves.

Moving it forward is what the server would see had that much time passed,
so a test reaches a key's expiry, a rule's end or an SLA deadline at once
instead of waiting for it. Until a test moves it, it is the wall clock, so a
server shared by a module behaves as with the real one; a few seconds moved
are what a slow machine could add between two tests anyway.
"""

from __future__ import annotations

from escalated.timeutil import now_ms


class MovableClock:
    def __init__(self) -> None:
        self.offset_ms = 0

    def __call__(self) -> int:
        return now_ms() + self.offset_ms

    def advance(self, seconds: float) -> None:
        self.offset_ms += round(seconds * 1000)
