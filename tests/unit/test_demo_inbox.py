"""The demo's receiver acts on each escalation's callback once, as an agent should."""

from __future__ import annotations

from escalated.agent.outcome import Callback
from escalated.commands.demo import Inbox


def callback(escalation_id: str, delivery_id: str) -> Callback:
    return Callback(
        escalation_id=escalation_id, run_id="r", agent_id="a", policy="p", choice="deny",
        resolved_by="human", answered_by="alice", answered_at="2026-11-25T00:00:00.000Z", delivery_id=delivery_id,
    )  # fmt: skip


def test_a_redelivered_callback_is_counted_and_shown_once():
    shown: list[str] = []
    inbox = Inbox(on_arrival=lambda c: shown.append(c.escalation_id))
    for c in (callback("esc_1", "dlv_1"), callback("esc_1", "dlv_1"), callback("esc_2", "dlv_2")):
        inbox(c)
    assert [c.escalation_id for c in inbox.received] == ["esc_1", "esc_2"] and shown == ["esc_1", "esc_2"]


def test_callbacks_that_arrived_before_anyone_watched_are_shown_when_watching_starts():
    # A short SLA can breach while the demo is still setting up: that callback
    # must still be shown, once, before the ones that follow.
    inbox = Inbox()
    inbox(callback("esc_1", "dlv_1"))
    shown: list[str] = []
    inbox.watch(lambda c: shown.append(c.escalation_id))
    inbox(callback("esc_2", "dlv_2"))
    assert shown == ["esc_1", "esc_2"]
