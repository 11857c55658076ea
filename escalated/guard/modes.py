"""The four autonomy modes, their order and what each means at run time.

The guard runtime imports this module, so it stays dependency-free.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Mode:
    name: str
    rank: int  # higher = more human control; the rule table takes the max
    summary: str
    at_run_time: str


MODES: tuple[Mode, ...] = (
    Mode(
        name="required",
        rank=3,
        summary="A human decides before the result is used, every time.",
        at_run_time=(
            "The guard creates an escalation with the model's output as evidence and "
            "blocks (or suspends the workflow) until a reviewer decides. The result is "
            "used only when the chosen answer is one of the contract's approve_choices; "
            "any other outcome raises and the output is discarded. A server that cannot "
            "be reached fails closed."
        ),
    ),
    Mode(
        name="reviewed",
        rank=2,
        summary="The result is used; every one is reviewed after the fact.",
        at_run_time=(
            "The guard returns the model's result at once and files an escalation for "
            "every call, so a reviewer sees each result afterwards and can correct or "
            "roll back what it did. Nothing waits on the human."
        ),
    ),
    Mode(
        name="sampled",
        rank=1,
        summary="The result is used; a deterministic share is reviewed.",
        at_run_time=(
            "The guard returns the result at once. A fixed share (the contract's "
            "sample_rate) is filed for review after the fact; which calls are picked is "
            "decided by a hash of the run id, contract id and call ordinal, so a re-run "
            "picks the same calls."
        ),
    ),
    Mode(
        name="autonomous",
        rank=0,
        summary="No review.",
        at_run_time=(
            "The guard passes the result through untouched and files nothing. The "
            "contract still records that someone looked at this call and chose this."
        ),
    ),
)

MODE_NAMES: tuple[str, ...] = tuple(m.name for m in MODES)
_BY_NAME = {m.name: m for m in MODES}


def get_mode(name: str) -> Mode:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown mode {name!r}; expected one of {', '.join(MODE_NAMES)}") from None


def rank(name: str) -> int:
    return get_mode(name).rank


def strictest(names: tuple[str, ...] | list[str]) -> str:
    """The mode with the most human control among ``names`` (autonomous if empty)."""
    return max(names, key=rank, default="autonomous")
