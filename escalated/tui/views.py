"""Which escalations the inbox shows, and in what order.

The status views and sort orders are plain data so the keys that cycle them
and the help screen read from one place.
"""

from __future__ import annotations

from collections.abc import Iterable

from escalated.domain.models import CANCELLED, RESOLVED, STATUSES
from escalated.tui.format import LIVE_STATUSES, ms

# view name -> statuses shown. "open" is the working queue: what still needs a
# human. Decided, breached (resolved by timeout) and cancelled ones leave it.
VIEWS: dict[str, tuple[str, ...]] = {
    "open": LIVE_STATUSES,
    "resolved": (RESOLVED,),
    "cancelled": (CANCELLED,),
    "all": STATUSES,
}

SORTS = ("deadline", "newest", "oldest", "policy")

_NO_DEADLINE = float("inf")


def _created(escalation: dict) -> int:
    return ms(escalation.get("createdAt")) or 0


def _deadline(escalation: dict) -> float:
    deadline = ms(escalation.get("deadlineAt"))
    return _NO_DEADLINE if deadline is None else deadline


def select(escalations: Iterable[dict], *, view: str, policy: str | None, sort: str) -> list[dict]:
    shown = [
        e for e in escalations if e.get("status") in VIEWS[view] and (policy is None or e.get("policy") == policy)
    ]
    # Ids are ULIDs: a final tie-break on id keeps the order stable.
    if sort == "deadline":
        return sorted(shown, key=lambda e: (_deadline(e), _created(e), e["id"]))
    if sort == "oldest":
        return sorted(shown, key=lambda e: (_created(e), e["id"]))
    if sort == "policy":
        return sorted(shown, key=lambda e: (e.get("policy", ""), _deadline(e), e["id"]))
    return sorted(shown, key=lambda e: (_created(e), e["id"]), reverse=True)


def next_in(options: tuple[str, ...] | list[str], current: str) -> str:
    items = list(options)
    return items[(items.index(current) + 1) % len(items)] if current in items else items[0]


def policy_cycle(escalations: Iterable[dict], current: str | None) -> str | None:
    """All policies (None), then each policy seen, in name order."""
    policies: list[str | None] = [None, *sorted({e.get("policy", "") for e in escalations})]
    if current not in policies:
        return None
    return policies[(policies.index(current) + 1) % len(policies)]


def newer(current: dict | None, fresh: dict) -> dict:
    """The later of two copies of one escalation.

    A list fetched just before a stream event can arrive just after it; the
    history is append-only, so the longer one is the newer one.
    """
    if current is not None and len(current.get("history", [])) > len(fresh.get("history", [])):
        return current
    return fresh


def merge(current: dict[str, dict], items: list[dict]) -> dict[str, dict]:
    """The server's list, never stepping back to an older copy than we hold."""
    return {e["id"]: newer(current.get(e["id"]), e) for e in items}
