from escalated.timeutil import format_ms
from escalated.tui.components.escalation_table import BASE_WIDTHS, row_cells

T0 = 1_795_000_000_000


def sla_cell(now_ms: int):
    escalation = {
        "id": "esc_x", "status": "open", "policy": "p", "subject": {"label": "s"}, "question": "q",
        "createdAt": format_ms(T0), "deadlineAt": format_ms(T0 + 600_000),
    }  # fmt: skip
    return row_cells(escalation, now_ms)[-1]


def test_the_sla_countdown_changes_colour_as_the_deadline_nears():
    cells = [sla_cell(T0 + offset_s * 1000) for offset_s in (60, 400, 550, 601)]
    assert [str(c) for c in cells] == ["09:00", "03:20", "00:50", "overdue"]
    assert [c.style for c in cells] == ["green", "bold yellow", "bold red", "bold reverse red"]


def test_a_resolved_row_says_what_was_decided_and_by_whom():
    escalation = {
        "id": "esc_x", "status": "resolved", "policy": "p", "subject": {"label": "s"}, "question": "Refund?",
        "choices": [{"id": "deny", "label": "Deny"}], "createdAt": format_ms(T0),
        "resolution": {"choice": "deny", "resolvedBy": "human", "answeredBy": "alice"},
    }  # fmt: skip
    assert row_cells(escalation, T0, widths={**BASE_WIDTHS, "question": 40})[3] == "→ Deny (alice) · Refund?"
    timed_out = {**escalation, "resolution": {"choice": "deny", "resolvedBy": "timeout", "answeredBy": "policy"}}
    assert row_cells(timed_out, T0, widths={**BASE_WIDTHS, "question": 40})[3].startswith("→ Deny (timeout)")
