"""Statements composed from a dialect's named parts: the optional clauses of
reading escalations.

Both dialects name the same parts and parameters (``store/sql/<dialect>.sql``);
the reviewer's routes travel as one list (a JSON text on SQLite, an array
on PostgreSQL: the connector's business).
"""

from __future__ import annotations

from collections.abc import Mapping
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
    escalation_id: str, blocks: Mapping[str, str], *, workspace_id: str | None, routes: tuple[str, ...] | None
) -> tuple[str, dict[str, Any]]:
    """``get_escalation``, narrowed to a workspace and to what the routes see
    when given (``workspace_id=None`` is the system's view, across workspaces)."""
    sql = blocks["get_escalation"]
    params: dict[str, Any] = {"id": escalation_id}
    if workspace_id is not None:
        sql += blocks["in_workspace"]
        params["workspace_id"] = workspace_id
    if routes is not None:
        sql += blocks["routed_to"]
        params["routes"] = list(routes)
    return sql, params


def list_statement(query: ListQuery, blocks: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """``list_escalations`` with the query's filters, cursor, routing and order;
    it asks for one row more than the page, to tell whether another follows."""
    sql = blocks["list_escalations"]
    params: dict[str, Any] = {"workspace_id": query.workspace_id}
    for field, part in _FILTERS:
        if (value := getattr(query, field)) is not None:
            sql += blocks[part]
            params[field] = value
    if query.cursor:
        sql += blocks["after_id" if query.ascending else "before_id"]
        params["cursor"] = query.cursor
    if query.routes is not None:
        sql += blocks["routed_to"]
        params["routes"] = list(query.routes)
    sql += blocks["oldest_first" if query.ascending else "newest_first"]
    params["limit"] = query.limit + 1
    return sql, params


def page_of(escalations: list[Escalation], *, limit: int) -> tuple[list[Escalation], str | None]:
    """The page and the cursor of the next one (None on the last page)."""
    page = escalations[:limit]
    return page, (page[-1].id if len(escalations) > limit else None)
