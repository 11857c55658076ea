"""Local, deterministic draft contracts for discovered calls.

Same call, same variant, same draft, on any machine and without a network.
``variant`` is what "regenerate" turns: each step picks the next wording and
choice set, so the user can cycle through a few sensible drafts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from escalated.guard.contracts import Choice, Contract
from escalated.contracts.calls import LlmCall
from escalated.contracts.rules import RULES_BY_ID

DEFAULT_SAMPLE_RATE = 0.1

# What the output controls, as the reviewer should read it (rule kinds).
_SUBJECTS = {
    "code-execution": "code the model wants to run",
    "money": "payment or refund the model decided",
    "deletion": "deletion the model asked for",
    "access": "access or permission change the model decided",
    "outbound-message": "message the model is about to send",
    "write": "record the model is about to write",
    "unresolved-tools": "tool calls the model chose",
    "injection-sink": "text that flows into a query or page",
    "read-only-tool": "private data the model looked up",
    "branch": "choice that steers the workflow",
    "free-text": "text the model produced",
}

_REQUIRED_QUESTIONS = (
    "Approve the {subject} in {where}?",
    "Let the {subject} in {where} go ahead?",
    "Is the {subject} in {where} correct and safe to use?",
)
_REVIEW_QUESTIONS = (
    "Review the {subject} in {where}: was it right?",
    "Was the {subject} in {where} acceptable?",
    "Check the {subject} in {where} after the fact.",
)
_REQUIRED_CHOICES = (
    ((Choice("approve", "Approve"), Choice("reject", "Reject")), ("approve",)),
    ((Choice("approve", "Approve"), Choice("reject", "Reject"), Choice("escalate", "Escalate further")), ("approve",)),
    ((Choice("allow", "Allow"), Choice("block", "Block")), ("allow",)),
)
_REVIEW_CHOICES = (
    ((Choice("ok", "Looks right"), Choice("flag", "Needs correction")), ("ok",)),
    ((Choice("ok", "Acceptable"), Choice("rollback", "Roll back"), Choice("flag", "Follow up")), ("ok",)),
)


def draft_contract(call: LlmCall, *, taken_ids: Iterable[str] = (), variant: int = 0) -> Contract:
    """The local draft for ``call``; ``taken_ids`` keeps the id unique in the project."""
    mode = call.recommendation.mode
    required = mode == "required"
    questions = _REQUIRED_QUESTIONS if required else _REVIEW_QUESTIONS
    choices, approve = choice_set(mode, variant=variant)
    subject = _subject(call)
    question = questions[variant % len(questions)].format(subject=subject, where=_where(call))
    return Contract(
        id=call.guard_id or contract_id(call, taken=taken_ids),
        path=call.location.path,
        function=call.function,
        index=call.index,
        provider=call.provider,
        api=call.api,
        mode=mode,
        rules=tuple(call.recommendation.rules),
        policy=policy_key(call),
        question=question[0].upper() + question[1:],
        choices=choices,
        approve_choices=approve,
        sample_rate=DEFAULT_SAMPLE_RATE if mode == "sampled" else None,
    )


def choice_set(mode: str, *, variant: int = 0) -> tuple[tuple[Choice, ...], tuple[str, ...]]:
    """Choices and approving ids that suit ``mode``: decide before use, or review after."""
    choice_sets = _REQUIRED_CHOICES if mode == "required" else _REVIEW_CHOICES
    return choice_sets[variant % len(choice_sets)]


def _subject(call: LlmCall) -> str:
    """What the output controls, from the first rule that chose the mode."""
    for rule_id in call.recommendation.rules:
        rule = RULES_BY_ID.get(rule_id)
        if rule is not None and rule.kind in _SUBJECTS:
            return _SUBJECTS[rule.kind]
    return "model's output"


def _where(call: LlmCall) -> str:
    return "module-level code" if call.function == "<module>" else call.function


def module_stem(path: str) -> str:
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    if stem == "__init__":  # a package's own module is named by the package
        parts = path.split("/")
        stem = parts[-2] if len(parts) > 1 else "package"
    return stem


def snake(name: str) -> str:
    """``decideRefund`` / ``DecideRefund`` / ``<lambda>`` -> ``decide_refund`` / ``lambda``."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    name = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_").lower()
    return re.sub(r"_+", "_", name) or "call"


def contract_id(call: LlmCall, *, taken: Iterable[str] = ()) -> str:
    """``<module stem>.<function lower snake>[.<index> if index>0]``, made unique with ``_2``, ``_3``…"""
    last = call.function.rsplit(".", 1)[-1]
    base = f"{snake(module_stem(call.location.path))}.{snake(last)}"
    if call.index > 0:
        base += f".{call.index}"
    taken = set(taken)
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    return candidate


def _key_part(text: str) -> str:
    part = re.sub(r"[^a-z0-9_-]+", "-", snake(text).replace("_", "-")).strip("-_")
    return part or "call"


def policy_key(call: LlmCall) -> str:
    """``agents.<module>.<function-kebab>``: a valid dotted lower-case policy key."""
    last = call.function.rsplit(".", 1)[-1]
    return f"agents.{_key_part(module_stem(call.location.path))}.{_key_part(last)}"
