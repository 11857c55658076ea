"""The web inbox's query: which escalations a reviewer sees, filtered and sorted."""

from __future__ import annotations

import attrs

from escalated.domain.models import STATUSES, Escalation

INBOX_LIMIT = 200
INBOX_STATUSES = ("active", *STATUSES, "all")
INBOX_SORTS = ("deadline", "newest", "oldest")


@attrs.frozen
class InboxQuery:
    status: str = "active"  # one of INBOX_STATUSES
    policy: str = ""
    text: str = ""
    sort: str = "deadline"  # one of INBOX_SORTS
    mine: bool = False  # only those assigned to the caller (claimed or assigned, CONTRACT §15)


@attrs.frozen
class Inbox:
    items: tuple[Escalation, ...]
    counts: dict[str, int]  # per status, of everything routed to the caller
    query: InboxQuery


def matches_text(esc: Escalation, text: str) -> bool:
    """Free-text filter: every word appears in the id, policy, agent, subject or question."""
    if not text.strip():
        return True
    subject = esc.content.subject
    hay = " ".join((esc.id, esc.policy, esc.agent_id, esc.run_id, subject.label, subject.id, esc.content.question)).lower()
    return all(word in hay for word in text.lower().split())


def sort_inbox(items: list[Escalation], sort: str) -> list[Escalation]:
    if sort == "deadline":  # soonest first; no deadline last, newest first among those
        return sorted(items, key=lambda e: (e.deadline_ms is None, e.deadline_ms or 0, -e.created_ms))
    return sorted(items, key=lambda e: e.id, reverse=sort != "oldest")
