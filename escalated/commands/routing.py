"""Saying that a policy's reviewers match no user, for ``policy set/apply/list/show`` and ``serve``.

A reviewer name is free text, so a typo (or a user not added yet) saves
fine and then routes escalations to nobody. ``AdminService`` refuses such
a policy unless asked on purpose (``UnknownReviewers``) and lists the ones
saved anyway (``unroutable``); every place an operator looks at policies
says so, in these words.
"""

from __future__ import annotations

import logging

from escalated.core.admin import AdminService, UnknownReviewers, Unroutable
from escalated.domain.models import DEFAULT_WORKSPACE, Policy, UserInfo

ALLOW_FLAG = "--allow-unknown-reviewers"


def known_names(users: list[UserInfo]) -> str:
    names = ", ".join(sorted(u.name for u in users)) or "none yet"
    groups = ", ".join(sorted({f"group:{g}" for u in users for g in u.groups})) or "none"
    return f"users: {names}; groups: {groups}"


def refusal(exc: UnknownReviewers) -> str:
    return (
        f"policy {exc.policy.key}: no user or group matches {', '.join(exc.unknown)} ({known_names(exc.users)}). "
        f"Add them with `escalated users add NAME [--group G]`, or pass {ALLOW_FLAG} to save it anyway."
    )


def unroutable_warning(policy: Policy, unknown: tuple[str, ...], *, workspace: str) -> str:
    reach = "its escalations reach no reviewer" if len(unknown) == len(policy.reviewers) else "they receive nothing"
    where = f" in workspace {workspace}" if workspace != DEFAULT_WORKSPACE else ""
    return f"warning: policy {policy.key}{where} routes to {', '.join(unknown)}, matching no user: {reach}"


def warnings(found: tuple[Unroutable, ...] | list[Unroutable], *, workspace: str) -> list[str]:
    return [unroutable_warning(u.policy, u.unknown, workspace=workspace) for u in found]


async def unroutable_everywhere(admin: AdminService) -> list[str]:
    """A warning per stored policy, of any workspace, with a reviewer that matches no user."""
    found = []
    for ws in await admin.workspaces():
        found += warnings(await admin.unroutable(await admin.operator(workspace=ws.name)), workspace=ws.name)
    return found


async def log_unroutable_policies(admin: AdminService, log: logging.Logger) -> None:
    for warning in await unroutable_everywhere(admin):
        log.warning("%s", warning.removeprefix("warning: "))
