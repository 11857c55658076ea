"""Value objects the core and the store exchange besides the model itself:
a page request, and what an Idempotency-Key remembers."""

from __future__ import annotations

import attrs

from escalated.domain.models import Escalation


@attrs.frozen
class ListQuery:
    workspace_id: str
    routes: tuple[str, ...] | None
    status: str | None = None
    policy: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    assignee: str | None = None
    limit: int = 50
    cursor: str | None = None
    ascending: bool = False


@attrs.frozen
class IdempotencyRecord:
    """Stored with a create: the same key within the window replays this answer."""

    workspace_id: str
    key: str
    body_sha256: str
    status: int
    response_json: bytes


@attrs.frozen
class Replay:
    """An earlier create with the same Idempotency-Key."""

    body_sha256: str
    status: int
    response_json: bytes


@attrs.frozen
class Change:
    """One committed history entry, as a store shared by several processes
    reports it: its event number, and the escalation as it is now."""

    seq: int
    event: str  # as in history: created, acknowledged, decided, breached, cancelled
    at_ms: int
    escalation: Escalation
