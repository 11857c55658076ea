"""How an escalation reads to a reviewer who is not a developer: durations in
words, what happens when nobody answers, choices and answers by their labels.

Every screen that shows an escalation (the web app, the terminal UI, email,
Slack) words these the same way, so they live here, pure and headless.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_UNITS = (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1))


def duration_words(ms: int) -> str:
    """``3 h 54 min``, ``2 d 4 h``, ``45 s``: the largest unit and, if not zero, the next one."""
    seconds = max(0, int(ms) // 1000)
    for index, (unit, size) in enumerate(_UNITS):
        if seconds < size and size > 1:
            continue
        first, rest = divmod(seconds, size)
        words = f"{first} {unit}"
        if index + 1 < len(_UNITS):
            next_unit, next_size = _UNITS[index + 1]
            if rest // next_size:
                words += f" {rest // next_size} {next_unit}"
        return words
    return "0 s"


def timeout_outcome(*, deadline_ms: int | None, default_label: str | None, now_ms: int) -> str:
    """What happens if nobody answers, in one sentence a reviewer can act on.

    ``in 3 h 54 min, Deny applies``; past the deadline (the clock is about to
    apply it) ``now, Deny applies``; without an SLA, nothing happens by itself.
    """
    if deadline_ms is None:
        return "no deadline: it waits until someone decides"
    label = default_label or "the policy's default"
    left_ms = deadline_ms - now_ms
    if left_ms <= 0:
        return f"now, {label} applies"
    return f"in {duration_words(left_ms)}, {label} applies"


def choice_label(choices: Iterable[Any], choice_id: str | None) -> str | None:
    """The label of ``choice_id`` among ``choices`` (objects or dicts with id/label); the id if none matches."""
    if choice_id is None:
        return None
    for choice in choices:
        cid, label = (choice.get("id"), choice.get("label")) if isinstance(choice, Mapping) else (choice.id, choice.label)
        if cid == choice_id:
            found: str = label or cid
            return found
    return choice_id


def response_words(fields: Iterable[Any], response: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """A decision's response fields as (field label, value label) pairs, in the fields' order."""
    if not response:
        return []
    pairs: list[tuple[str, str]] = []
    known: set[str] = set()
    for field in fields:
        get: Callable[[str], Any] = field.get if isinstance(field, Mapping) else functools.partial(_opt, field)
        name = get("name")
        if name not in response:
            continue
        known.add(name)
        value = response[name]
        label = next((_opt(o, "label") for o in (get("options") or ()) if _opt(o, "value") == value), None)
        pairs.append((get("label") or name, label if label is not None else _plain(value)))
    pairs.extend((name, _plain(value)) for name, value in response.items() if name not in known)
    return pairs


def _opt(option: Any, key: str) -> Any:
    return option.get(key) if isinstance(option, Mapping) else getattr(option, key, None)


def _plain(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
