"""Reviewer operations (CONTRACT §15): reminders, escalation levels and quorum.

A policy's settings are ``ReviewRules``; an escalation keeps a copy made at
creation (as it keeps its deadline and routes), so changing the policy does
not move the reminders, levels or quorum of escalations already open.

The SLA clock asks ``due(...)`` what an open escalation owes at a time: the
levels whose ``after`` passed and whether a reminder is due. The answer is
a pure function of the escalation and the time, so a restarted clock
rebuilds it from the database alone.
"""

from __future__ import annotations

from typing import Any

import attrs

from escalated.domain.masking import mask_targets
from escalated.domain.models import Delivery, HistoryEntry, Level, ReviewRules
from escalated.domain.validation import CHOICE_ID
from escalated.errors import ConfigError
from escalated.timeutil import format_duration_s, parse_duration_s

MIN_DURATION_S = 1.0
MAX_QUORUM = 100  # beyond any team; keeps a typo (--quorum 1000) from making a choice unreachable


@attrs.frozen
class Due:
    """What an open escalation owes at a time, and when it next owes anything."""

    levels: tuple[int, ...]  # levels reached now, 1-based, in order
    remind: bool
    remind_ms: int | None  # the next reminder after this pass
    nudge_ms: int | None  # the earliest next reminder or level (None: nothing more)


def level_ms(rules: ReviewRules, *, created_ms: int, level: int) -> int | None:
    """When level ``level`` (1-based) is due, or None past the last."""
    if level > len(rules.levels):
        return None
    return created_ms + int(rules.levels[level - 1].after_s * 1000)


def first_nudge(rules: ReviewRules, *, created_ms: int) -> tuple[int | None, int | None]:
    """(remind_ms, nudge_ms) of a new escalation."""
    if rules.remind_every_s is None and not rules.levels:  # most policies: nothing to nudge
        return None, None
    remind_ms = created_ms + int(rules.remind_every_s * 1000) if rules.remind_every_s is not None else None
    return remind_ms, _earliest(remind_ms, level_ms(rules, created_ms=created_ms, level=1))


def due(rules: ReviewRules, *, created_ms: int, level: int, remind_ms: int | None, at_ms: int) -> Due:
    """Everything due by ``at_ms``. After a long outage one reminder is owed,
    not one per missed interval, and the next comes a full interval later."""
    reached = []
    while (at := level_ms(rules, created_ms=created_ms, level=level + 1)) is not None and at <= at_ms:
        level += 1
        reached.append(level)
    remind = remind_ms is not None and remind_ms <= at_ms
    if remind:  # and none after it if the policy's reminders were turned off since
        every_s = rules.remind_every_s
        remind_ms = at_ms + int(every_s * 1000) if every_s is not None else None
    nudge_ms = _earliest(remind_ms, level_ms(rules, created_ms=created_ms, level=level + 1))
    return Due(levels=tuple(reached), remind=remind, remind_ms=remind_ms, nudge_ms=nudge_ms)


def _earliest(*times: int | None) -> int | None:
    known = [t for t in times if t is not None]
    return min(known) if known else None


def routes_of(reviewers: tuple[str, ...]) -> tuple[str, ...]:
    """Route names (escalation_routes) of a list of reviewers."""
    return tuple(r if r.startswith("group:") else f"user:{r}" for r in reviewers)


# -- building the rules from CLI flags, the policy file and the web form --------


def _duration_s(text: str, *, what: str) -> float:
    value = parse_duration_s(text)
    if value < MIN_DURATION_S:
        raise ConfigError(f"{what} {text!r} must be at least 1s")
    return value


def parse_level(text: str) -> Level:
    """``15m:bob,group:leads`` (the ``--level`` flag, a line of the web form):
    after, then reviewers; ``|TARGET,...`` after them sets the level's notify."""
    head, _, notify = text.partition("|")
    after, sep, reviewers = head.partition(":")
    names = tuple(r.strip() for r in reviewers.split(",") if r.strip())
    if not sep or not names:
        raise ConfigError(f"level {text!r}: use AFTER:REVIEWER[,REVIEWER...][|NOTIFY,...], e.g. 15m:bob,group:leads")
    targets = tuple(t.strip() for t in notify.split(",") if t.strip())
    return Level(after_s=_duration_s(after.strip(), what="level after"), reviewers=names, notify=targets)


def format_level(level: Level, *, masked: bool = False) -> str:
    """The ``--level`` spelling of a level (what ``parse_level`` reads back);
    ``masked``: webhook and Slack URLs as displayed (CONTRACT §16)."""
    text = f"{format_duration_s(level.after_s)}:{','.join(level.reviewers)}"
    notify = mask_targets(level.notify) if masked else level.notify
    return f"{text}|{','.join(notify)}" if notify else text


def level_from_table(value: Any, *, where: str) -> Level:
    """One ``levels`` entry of a policy file: ``{after, reviewers, notify?}``."""
    if not isinstance(value, dict) or set(value) - {"after", "reviewers", "notify"} or "after" not in value:
        raise ConfigError(f"{where}: each level is {{after = \"15m\", reviewers = [...], notify = [...]}} (notify optional)")
    lists = {}
    for key in ("reviewers", "notify"):
        items = value.get(key, [])
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise ConfigError(f"{where}.{key} must be a list of strings")
        lists[key] = tuple(items)
    if not lists["reviewers"]:
        raise ConfigError(f"{where}.reviewers must name at least one reviewer")
    return Level(after_s=_duration_s(str(value["after"]), what=f"{where}.after"), **lists)


def build_rules(
    key: str, *, remind_every: str | None, levels: tuple[Level, ...], quorum: int | None, quorum_choices: tuple[str, ...]
) -> ReviewRules:
    """The rules of policy ``key``, checked; ``ConfigError`` in the words of ``policy set``."""
    try:
        return _rules(remind_every=remind_every, levels=levels, quorum=quorum, quorum_choices=quorum_choices)
    except ConfigError as exc:
        raise ConfigError(f"policy {key}: {exc.detail}") from None


def _rules(
    *, remind_every: str | None, levels: tuple[Level, ...], quorum: int | None, quorum_choices: tuple[str, ...]
) -> ReviewRules:
    afters = [level.after_s for level in levels]
    if afters != sorted(set(afters)):
        raise ConfigError("levels must come in order of their 'after', each later than the one before")
    quorum = 1 if quorum is None else quorum
    if not isinstance(quorum, int) or isinstance(quorum, bool) or not 1 <= quorum <= MAX_QUORUM:
        raise ConfigError(f"quorum must be a whole number from 1 to {MAX_QUORUM}")
    for choice in quorum_choices:
        if not CHOICE_ID.match(choice):
            raise ConfigError(f"quorum choice {choice!r} is not a valid choice id")
    if quorum > 1 and not quorum_choices:
        raise ConfigError("a quorum above 1 needs the choices it applies to (--quorum-choice / quorum_choices)")
    return ReviewRules(
        remind_every_s=_duration_s(remind_every, what="remind_every") if remind_every else None,
        levels=tuple(levels),
        quorum=quorum,
        quorum_choices=tuple(dict.fromkeys(quorum_choices)),
    )


@attrs.frozen
class Nudge:
    """One open escalation's reminder and/or levels, as the store writes them:
    only if its ``nudge_ms`` is still ``expected_ms`` (compare-and-set)."""

    escalation_id: str
    expected_ms: int
    level: int
    remind_ms: int | None
    nudge_ms: int | None
    routes: tuple[str, ...]  # the reached levels' reviewers, added to its routing
    history: tuple[HistoryEntry, ...]  # one "escalated" entry per level reached
    notifications: tuple[Delivery, ...]
