"""Checking that a policy's reviewers exist, for ``policy set/apply/list/show`` and ``serve``.

A reviewer name is free text, so a typo (or a user not added yet) saves
fine and then routes escalations to nobody. Every place an operator looks
at policies says so.
"""

from __future__ import annotations

import logging
import sqlite3

from escalated.domain.models import Policy, UserInfo, Workspace
from escalated.domain.policies import unknown_reviewers
from escalated.errors import ConfigError
from escalated.store import admin

ALLOW_FLAG = "--allow-unknown-reviewers"


def known_names(users: list[UserInfo]) -> str:
    names = ", ".join(sorted(u.name for u in users)) or "none yet"
    groups = ", ".join(sorted({f"group:{g}" for u in users for g in u.groups})) or "none"
    return f"users: {names}; groups: {groups}"


def unroutable_warning(policy: Policy, unknown: tuple[str, ...], *, workspace: str) -> str:
    reach = "its escalations reach no reviewer" if len(unknown) == len(policy.reviewers) else "they receive nothing"
    where = f" in workspace {workspace}" if workspace != admin.DEFAULT_WORKSPACE else ""
    return f"warning: policy {policy.key}{where} routes to {', '.join(unknown)}, matching no user: {reach}"


def check_reviewers(conn: sqlite3.Connection, policies: list[Policy], *, allow: bool) -> list[str]:
    """Refuse policies whose reviewers match no user (or, with ``allow``, return warnings)."""
    warnings = []
    for policy in policies:
        users = admin.list_users(conn, policy.workspace_id)
        unknown = unknown_reviewers(policy.reviewers, users)
        if not unknown:
            continue
        if not allow:
            raise ConfigError(
                f"policy {policy.key}: no user or group matches {', '.join(unknown)} ({known_names(users)}). "
                f"Add them with `escalated users add NAME [--group G]`, or pass {ALLOW_FLAG} to save it anyway."
            )
        warnings.append(unroutable_warning(policy, unknown, workspace=_workspace_name(conn, policy.workspace_id)))
    return warnings


def unroutable_policies(conn: sqlite3.Connection, workspaces: list[Workspace] | None = None) -> list[str]:
    """A warning per stored policy with a reviewer that matches no user."""
    warnings = []
    for ws in workspaces if workspaces is not None else admin.list_workspaces(conn):
        users = admin.list_users(conn, ws.id)
        for policy in admin.list_policies(conn, ws.id):
            if unknown := unknown_reviewers(policy.reviewers, users):
                warnings.append(unroutable_warning(policy, unknown, workspace=ws.name))
    return warnings


def log_unroutable_policies(conn: sqlite3.Connection, log: logging.Logger) -> None:
    for warning in unroutable_policies(conn):
        log.warning("%s", warning.removeprefix("warning: "))


def _workspace_name(conn: sqlite3.Connection, workspace_id: str) -> str:
    return next((ws.name for ws in admin.list_workspaces(conn) if ws.id == workspace_id), workspace_id)
