"""Rows become domain objects here, and only here."""

from __future__ import annotations

import orjson

from escalated.domain.convert import content_from_json, converter
from escalated.domain.models import (
    Attempt,
    Cancellation,
    Delivery,
    Escalation,
    HistoryEntry,
    Resolution,
    Resume,
)

ESCALATION_COLUMNS = (
    "id, workspace_id, status, policy, agent_id, run_id, content_json, resume_url, resume_secret,"
    " created_ms, created_by, deadline_ms, default_choice, acknowledged_by, acknowledged_ms,"
    " resolution_json, cancellation_json"
)
ESCALATION_WIDTH = ESCALATION_COLUMNS.count(",") + 1

# An escalation row plus its history as one JSON array of [seq, event, by,
# at_ms]: a read is one query (one thread hop) instead of two. Sorted by seq
# in Python: SQLite 3.40 has no ORDER BY inside json_group_array.
ESCALATION_WITH_HISTORY = ESCALATION_COLUMNS + (
    ", (SELECT json_group_array(json_array(seq, event, by, at_ms))"
    " FROM escalation_events WHERE escalation_events.escalation_id = escalations.id)"
)
DELIVERY_COLUMNS = "id, escalation_id, kind, target, event, status, body, secret, attempts_json, next_attempt_ms, created_ms"


def escalation_from_row(row: tuple, history: tuple[HistoryEntry, ...] = ()) -> Escalation:
    (eid, ws, status, policy, agent_id, run_id, content, url, secret, created_ms, created_by,
     deadline_ms, default_choice, ack_by, ack_ms, resolution, cancellation) = row  # fmt: skip
    return Escalation(
        id=eid,
        workspace_id=ws,
        status=status,
        policy=policy,
        agent_id=agent_id,
        run_id=run_id,
        content=content_from_json(orjson.loads(content)),
        created_ms=created_ms,
        created_by=created_by,
        resume=Resume(url=url, secret=secret) if url else None,
        deadline_ms=deadline_ms,
        default_choice=default_choice,
        acknowledged_by=ack_by,
        acknowledged_ms=ack_ms,
        resolution=converter.structure(orjson.loads(resolution), Resolution) if resolution else None,
        cancellation=converter.structure(orjson.loads(cancellation), Cancellation) if cancellation else None,
        history=history,
    )


def escalation_with_history(row: tuple) -> Escalation:
    """A row selected with ESCALATION_WITH_HISTORY."""
    entries = sorted(orjson.loads(row[ESCALATION_WIDTH]))
    history = tuple(HistoryEntry(event=event, by=by, at_ms=at_ms) for _, event, by, at_ms in entries)
    return escalation_from_row(row[:ESCALATION_WIDTH], history)


def delivery_from_row(row: tuple) -> Delivery:
    did, eid, kind, target, event, status, body, secret, attempts, next_ms, created_ms = row
    return Delivery(
        id=did,
        escalation_id=eid,
        kind=kind,
        target=target,
        event=event,
        status=status,
        body=bytes(body),
        secret=secret,
        attempts=tuple(converter.structure(a, Attempt) for a in orjson.loads(attempts)),
        next_attempt_ms=next_ms,
        created_ms=created_ms,
    )


def to_json_text(value) -> str:
    return orjson.dumps(converter.unstructure(value)).decode()
