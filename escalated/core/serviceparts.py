"""What the halves of ``Service`` mixed in from other modules (review.py,
reviewerops.py) use of it, declared once so each half is checked against
``Service`` as it is. Nothing here exists at run time."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from escalated.core.settings import Settings
    from escalated.domain.models import Delivery, Escalation, Resolution
    from escalated.store.base import Store
    from escalated.timeutil import Clock


class ServiceParts:
    if TYPE_CHECKING:
        store: Store
        settings: Settings
        clock: Clock
        web_url: str

        def _callback(self, esc: Escalation, resolution: Resolution, event: str) -> Delivery | None: ...
        def _resolved(self, esc: Escalation, resolution: Resolution, event: str) -> Escalation: ...
        def _publish(self, event: str, esc: Escalation, at_ms: int, *, deliveries: int = 0) -> None: ...
        def wake_sender(self) -> None: ...
