from escalated.timeutil import format_ms
from escalated.tui.components.escalation_table import row_cells

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
