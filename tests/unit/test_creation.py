"""``new_escalation`` builds its Escalation by position: the same one the fields named would build."""

from __future__ import annotations

import pytest

from escalated.core.creation import new_escalation
from escalated.domain.models import (
    NO_REVIEW,
    Choice,
    Content,
    Escalation,
    HistoryEntry,
    Level,
    Policy,
    Principal,
    Resume,
    ReviewRules,
    Subject,
)
from escalated.domain.review import first_nudge
from escalated.domain.validation import CreateRequest

AT = 1_764_300_000_123
CONTENT = Content(Subject("order", "o-1", "Order 1"), "Refund?", ("a",), (Choice("approve", "Approve"),))


@pytest.mark.parametrize(
    ("policy", "resume", "principal"),
    [
        (Policy(workspace_id="w", key="p"), None, Principal(kind="key", id="key_1", name=None, workspace_id="w", scopes=frozenset())),
        (
            Policy(
                workspace_id="w", key="p", sla_s=60.5, default_choice="approve",
                review=ReviewRules(remind_every_s=30.0, levels=(Level(after_s=120.0, reviewers=("group:leads",)),)),
            ),
            Resume("http://x.test/r", secret="s"),
            Principal(kind="user", id="usr_1", name="rita", workspace_id="w", scopes=frozenset()),
        ),
    ],
)  # fmt: skip
def test_a_new_escalation_is_the_one_its_fields_by_name_make(policy, resume, principal):
    made = new_escalation(principal, CreateRequest("p", "agent", "run", CONTENT, resume), policy, at_ms=AT)
    remind_ms, nudge_ms = first_nudge(policy.review, created_ms=AT)
    assert made == Escalation(
        id=made.id, workspace_id="w", status="open", policy="p", agent_id="agent", run_id="run", content=CONTENT,
        created_ms=AT, created_by=principal.actor, resume=resume,
        deadline_ms=None if policy.sla_s is None else AT + 60_500, default_choice=policy.default_choice,
        history=(HistoryEntry("created", principal.actor, AT),), review=policy.review, remind_ms=remind_ms, nudge_ms=nudge_ms,
    )  # fmt: skip
    assert made.id.startswith("esc_") and made.level == 0 and made.approvals == () and made.assignee is None
    assert policy.review == NO_REVIEW or made.nudge_ms is not None
