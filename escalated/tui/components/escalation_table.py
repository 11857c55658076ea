"""The inbox table: one row per escalation, keyed by escalation id.

Column widths are fixed so the table fits an 80-column terminal; the SLA
cell is coloured by urgency (green, amber, red, reversed red once overdue).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from escalated.tui.format import age_text, clip, ms, sla_text, urgency

COLUMNS = (("St", "status", 4), ("Policy", "policy", 13), ("Subject", "subject", 14),
           ("Question", "question", 22), ("Age", "age", 4), ("SLA", "sla", 7))

STATUS_MARK = {"open": "new", "acknowledged": "ack", "resolved": "done", "cancelled": "cncl"}

URGENCY_STYLE = {
    "ok": "green",
    "warn": "bold yellow",
    "critical": "bold red",
    "overdue": "bold reverse red",
    "none": "dim",
}


def row_cells(escalation: dict, now_ms: int) -> tuple[object, ...]:
    width = dict((key, w) for _, key, w in COLUMNS)
    created = ms(escalation.get("createdAt")) or now_ms
    sla = Text(sla_text(escalation, now_ms), style=URGENCY_STYLE[urgency(escalation, now_ms)], justify="right")
    return (
        STATUS_MARK.get(escalation.get("status", ""), "?"),
        clip(escalation.get("policy", ""), width["policy"]),
        clip((escalation.get("subject") or {}).get("label", ""), width["subject"]),
        clip(escalation.get("question", ""), width["question"]),
        Text(age_text(created, now_ms), justify="right"),
        sla,
    )


class EscalationTable(DataTable):
    DEFAULT_CSS = """
    EscalationTable { height: 1fr; }
    """

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for label, key, width in COLUMNS:
            self.add_column(label, key=key, width=width)

    def show(self, escalations: list[dict], now_ms: int) -> None:
        """Show ``escalations`` in this order, keeping the cursor on the same one."""
        ids = [e["id"] for e in escalations]
        if ids == [key.value for key in self.rows]:
            # Same rows (the common case, once a second): update in place, no flicker.
            for escalation in escalations:
                for (_, column, _), cell in zip(COLUMNS, row_cells(escalation, now_ms), strict=True):
                    self.update_cell(escalation["id"], column, cell)
            return
        current = self.current_id()
        self.clear()
        for escalation in escalations:
            self.add_row(*row_cells(escalation, now_ms), key=escalation["id"])
        if current in ids:
            self.move_cursor(row=ids.index(current), animate=False)

    def current_id(self) -> str | None:
        if not self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return row_key.value
