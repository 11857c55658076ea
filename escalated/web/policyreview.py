"""The policy form's reminder, level and quorum fields (CONTRACT §15).

A level's own notify targets are shown masked like the policy's (CONTRACT
§16); a masked target sent back stands for the saved one it masks.
"""

from __future__ import annotations

from escalated.domain.masking import HIDDEN, unmask_targets
from escalated.domain.models import Policy, ReviewRules
from escalated.domain.review import format_level
from escalated.timeutil import format_duration_s


def review_values(rules: ReviewRules) -> dict[str, str]:
    """A saved policy's fields, as the form shows them."""
    return {
        "remind_every": format_duration_s(rules.remind_every_s) if rules.remind_every_s is not None else "",
        "levels": "\n".join(format_level(level, masked=True) for level in rules.levels),
        "quorum": str(rules.quorum) if rules.quorum > 1 else "",
        "quorum_choices": ", ".join(rules.quorum_choices),
    }


def needs_saved(text: str) -> bool:
    """Whether the levels typed hold a masked target (to look the saved policy up)."""
    return HIDDEN in text


def levels_to_save(text: str, *, saved: Policy | None) -> tuple[str, ...]:
    """The ``--level`` lines typed, with masked targets replaced by the saved
    ones (``ConfigError`` for a masked target that stands for none)."""
    stored = tuple(t for level in saved.review.levels for t in level.notify) if saved is not None else ()
    lines = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line:
            continue
        head, bar, targets = line.partition("|")
        if bar:
            typed = tuple(t.strip() for t in targets.split(",") if t.strip())
            line = f"{head}|{','.join(unmask_targets(typed, stored=stored))}"
        lines.append(line)
    return tuple(lines)
