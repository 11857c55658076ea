"""Building a policy from CLI flags or a policy file (CONTRACT §4)."""

from __future__ import annotations

import tomllib
from typing import Any

import attrs

from escalated.domain.contacts import email_problem
from escalated.domain.models import NO_REVIEW, Policy, ReviewRules, UserInfo
from escalated.domain.review import build_rules, level_from_table
from escalated.domain.validation import CHOICE_ID, POLICY_KEY
from escalated.domain.urlsafety import literal_problem
from escalated.errors import ConfigError
from escalated.timeutil import parse_duration_s

FILE_POLICY_KEYS = {
    "reviewers", "notify", "sla", "default_choice", "cancel_callback",
    "remind_every", "levels", "quorum", "quorum_choices",  # CONTRACT §15
}  # fmt: skip


def target_problem(target: str) -> str | None:
    """Why a notify target is unusable, or None (CONTRACT §4)."""
    if target == "desktop":
        return None
    for kind in ("webhook", "slack"):  # slack: a Slack incoming-webhook URL (issue #16)
        if target.startswith(f"{kind}:"):
            # Judged as the sender's HTTP client will read it (CONTRACT §5), so a
            # Unicode spelling of a metadata address is refused here, not sent.
            problem = literal_problem(target.removeprefix(f"{kind}:"))
            return None if problem is None else f"{kind} target {problem}"
    if target.startswith("email:"):
        problem = email_problem(target.removeprefix("email:"))
        return None if problem is None else f"email target: {problem}"
    return f"unknown notify target {target!r}: use webhook:URL, slack:WEBHOOK_URL, email:ADDRESS or desktop"


def build_policy(
    workspace_id: str,
    key: str,
    *,
    reviewers: tuple[str, ...] = (),
    notify: tuple[str, ...] = (),
    sla: str | None = None,
    default_choice: str | None = None,
    cancel_callback: bool = False,
    review: ReviewRules = NO_REVIEW,
) -> Policy:
    if not POLICY_KEY.match(key):
        raise ConfigError(f"policy key {key!r} must be dotted lower-case words, e.g. refunds.large")
    sla_s = parse_duration_s(sla) if sla else None
    if sla_s is not None and not default_choice:
        raise ConfigError(f"policy {key}: an SLA needs a default choice (--default-choice / default_choice)")
    if default_choice is not None and not CHOICE_ID.match(default_choice):
        raise ConfigError(f"policy {key}: default choice {default_choice!r} is not a valid choice id")
    for reviewer in reviewers:
        name = reviewer.removeprefix("group:")
        if not name.strip() or "," in name:
            raise ConfigError(f"policy {key}: reviewer {reviewer!r} must be NAME or group:NAME")
    for target in (*notify, *(t for level in review.levels for t in level.notify)):
        if problem := target_problem(target):
            raise ConfigError(f"policy {key}: {problem}")
    for reviewer in (r for level in review.levels for r in level.reviewers):
        if not reviewer.removeprefix("group:").strip():
            raise ConfigError(f"policy {key}: level reviewer {reviewer!r} must be NAME or group:NAME")
    return Policy(
        workspace_id=workspace_id,
        key=key,
        reviewers=tuple(reviewers),
        notify=tuple(notify),
        sla_s=sla_s,
        default_choice=default_choice,
        cancel_callback=cancel_callback,
        review=review,
    )


@attrs.frozen
class PolicyFile:
    workspace: str
    policies: tuple[tuple[str, dict[str, Any]], ...]  # (key, settings) as written


def parse_policy_file(text: str, *, source: str = "policy file") -> PolicyFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    unknown = set(data) - {"workspace", "policies"}
    if unknown:
        raise ConfigError(f"{source}: unknown table(s) {', '.join(sorted(unknown))}; expected [workspace] and [policies.\"KEY\"]")
    table = data.get("workspace", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: workspace must be a table: [workspace] with name = \"...\"")
    if set(table) - {"name"}:
        raise ConfigError(f"{source}: [workspace] takes only name")
    workspace = table.get("name", "default")
    if not isinstance(workspace, str):
        raise ConfigError(f"{source}: workspace.name must be a string")
    policies = data.get("policies", {})
    if not isinstance(policies, dict):
        raise ConfigError(f"{source}: [policies] must be a table of policies")
    out = []
    for key, settings in sorted(policies.items()):
        if not isinstance(settings, dict):
            raise ConfigError(f"{source}: policies.{key} must be a table")
        if extra := set(settings) - FILE_POLICY_KEYS:
            raise ConfigError(f"{source}: policies.{key}: unknown setting(s) {', '.join(sorted(extra))}")
        for list_key in ("reviewers", "notify"):
            value = settings.get(list_key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{source}: policies.{key}.{list_key} must be a list of strings")
        if not isinstance(settings.get("cancel_callback", False), bool):
            raise ConfigError(f"{source}: policies.{key}.cancel_callback must be true or false")
        for text_key in _TEXT_SETTINGS:  # a number or a date here is no duration or choice id
            if text_key in settings and not isinstance(settings[text_key], str):
                raise ConfigError(f"{source}: policies.{key}.{text_key} must be a string, like {_TEXT_SETTINGS[text_key]}")
        _check_review_settings(settings, where=f"{source}: policies.{key}")
        out.append((key, settings))
    return PolicyFile(workspace=workspace, policies=tuple(out))


_TEXT_SETTINGS = {"sla": '"15m"', "default_choice": '"deny"', "remind_every": '"10m"'}


def _check_review_settings(settings: dict[str, Any], *, where: str) -> None:
    if not isinstance(settings.get("levels", []), list):
        raise ConfigError(f"{where}.levels must be an array of tables")
    choices = settings.get("quorum_choices", [])
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise ConfigError(f"{where}.quorum_choices must be a list of strings")
    quorum = settings.get("quorum", 1)
    if not isinstance(quorum, int) or isinstance(quorum, bool):
        raise ConfigError(f"{where}.quorum must be a whole number")


def _file_review(key: str, settings: dict[str, Any]) -> ReviewRules:
    levels = tuple(
        level_from_table(value, where=f"policies.{key}.levels[{i}]") for i, value in enumerate(settings.get("levels", []))
    )
    remind = settings.get("remind_every")
    return build_rules(
        key,
        remind_every=str(remind) if remind is not None else None,
        levels=levels,
        quorum=settings.get("quorum"),
        quorum_choices=tuple(settings.get("quorum_choices", ())),
    )


def policy_from_file_entry(workspace_id: str, key: str, settings: dict[str, Any]) -> Policy:
    return build_policy(
        workspace_id,
        key,
        reviewers=tuple(settings.get("reviewers", ())),
        notify=tuple(settings.get("notify", ())),
        sla=str(settings["sla"]) if settings.get("sla") is not None else None,
        default_choice=settings.get("default_choice"),
        cancel_callback=settings.get("cancel_callback", False),
        review=_file_review(key, settings),
    )


def unknown_reviewers(reviewers: tuple[str, ...], users: list[UserInfo] | tuple[UserInfo, ...]) -> tuple[str, ...]:
    """The reviewers that match no user: a NAME nobody has, or a group:NAME no user is in.

    Such a policy routes (part of) its escalations to no one, which with no
    SLA means forever, so the CLI refuses it unless asked on purpose.
    """
    names = {user.name for user in users}
    groups = {group for user in users for group in user.groups}
    return tuple(
        r for r in reviewers if (r.removeprefix("group:") not in groups if r.startswith("group:") else r not in names)
    )
