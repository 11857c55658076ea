"""Statements composed from a dialect's named parts: the optional clauses of
reading escalations.

Both dialects name the same parts (``store/sql/<dialect>.sql``); they differ
only in how the reviewer's routes travel as one parameter (a JSON text on
SQLite, an array on PostgreSQL), which the caller encodes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from escalated.domain.models import Escalation
from escalated.domain.records import ListQuery

# ListQuery field -> the part that filters on it.
_FILTERS = (
    ("status", "with_status"),
    ("policy", "with_policy"),
    ("agent_id", "with_agent_id"),
    ("run_id", "with_run_id"),
    ("assignee", "with_assignee"),
)


def get_statement(
    escalation_id: str,
    blocks: dict[str, str],
    *,
    workspace_id: str | None,
    routes: tuple[str, ...] | None,
    encode_routes: Callable[[tuple[str, ...]], object],
) -> tuple[str, list[Any]]:
    """``get_escalation``, narrowed to a workspace and to what the routes see
    when given (``workspace_id=None`` is the system's view, across workspaces)."""
    sql = blocks["get_escalation"]
    params: list[Any] = [escalation_id]
    if workspace_id is not None:
        sql += blocks["in_workspace"]
        params.append(workspace_id)
    if routes is not None:
        sql += blocks["routed_to"]
        params.append(encode_routes(routes))
    return sql, params


def list_statement(
    query: ListQuery, blocks: dict[str, str], *, encode_routes: Callable[[tuple[str, ...]], object]
) -> tuple[str, list[Any]]:
    """``list_escalations`` with the query's filters, cursor, routing and order;
    it asks for one row more than the page, to tell whether another follows."""
    sql = blocks["list_escalations"]
    params: list[Any] = [query.workspace_id]
    for field, part in _FILTERS:
        if (value := getattr(query, field)) is not None:
            sql += blocks[part]
            params.append(value)
    if query.cursor:
        sql += blocks["after_id" if query.ascending else "before_id"]
        params.append(query.cursor)
    if query.routes is not None:
        sql += blocks["routed_to"]
        params.append(encode_routes(query.routes))
    sql += blocks["oldest_first" if query.ascending else "newest_first"]
    params.append(query.limit + 1)
    return sql, params


def page_of(escalations: list[Escalation], *, limit: int) -> tuple[list[Escalation], str | None]:
    """The page and the cursor of the next one (None on the last page)."""
    page = escalations[:limit]
    return page, (page[-1].id if len(escalations) > limit else None)
