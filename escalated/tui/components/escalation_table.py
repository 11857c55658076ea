"""The inbox table: one row per escalation, keyed by escalation id.

The base column widths fit an 80-column terminal; a wider table gives its
extra columns to the text (question first, then subject and policy). The
SLA cell is coloured by urgency (green, amber, red, reversed red once overdue).
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import DataTable

from escalated.domain.models import ACKNOWLEDGED, CANCELLED, OPEN, RESOLVED
from escalated.domain.wording import choice_label
from escalated.tui.format import age_text, clip, ms, sla_text, urgency

COLUMNS = (("St", "status", 4), ("Policy", "policy", 13), ("Subject", "subject", 14),
           ("Question", "question", 22), ("Age", "age", 4), ("SLA", "sla", 7))

STATUS_MARK = {OPEN: "new", ACKNOWLEDGED: "ack", RESOLVED: "done", CANCELLED: "cncl"}

URGENCY_STYLE = {
    "ok": "green",
    "warn": "bold yellow",
    "critical": "bold red",
    "overdue": "bold reverse red",
    "none": "dim",
}


BASE_TABLE_WIDTH = 80  # the base widths above are sized for this
# Shares of the width beyond BASE_TABLE_WIDTH; the rest stay fixed.
EXTRA_SHARE = {"question": 0.6, "subject": 0.25, "policy": 0.15}
BASE_WIDTHS = {key: w for _, key, w in COLUMNS}


def column_widths(table_width: int) -> dict[str, int]:
    """Each column's width for a table ``table_width`` cells wide (never below the base)."""
    extra = max(0, table_width - BASE_TABLE_WIDTH)
    widths = dict(BASE_WIDTHS)
    given = 0
    for key, share in EXTRA_SHARE.items():
        widths[key] += int(extra * share)
        given += int(extra * share)
    widths["question"] += extra - given  # rounding leftovers
    return widths


def row_cells(escalation: dict, now_ms: int, *, widths: dict[str, int] = BASE_WIDTHS) -> tuple[object, ...]:
    width = widths
    created = ms(escalation.get("createdAt")) or now_ms
    sla = Text(sla_text(escalation, now_ms), style=URGENCY_STYLE[urgency(escalation, now_ms)], justify="right")
    return (
        STATUS_MARK.get(escalation.get("status", ""), "?"),
        clip(escalation.get("policy", ""), width["policy"]),
        clip(_subject(escalation), width["subject"]),
        clip(question_cell(escalation), width["question"]),
        Text(age_text(created, now_ms), justify="right"),
        sla,
    )


def question_cell(escalation: dict) -> str:
    """The question; once resolved, what was decided and by whom comes first."""
    question = escalation.get("question", "")
    resolution = escalation.get("resolution")
    if not resolution:
        return question
    label = choice_label(escalation.get("choices", []), resolution.get("choice"))
    who = "timeout" if resolution.get("resolvedBy") == "timeout" else resolution.get("answeredBy")
    return f"→ {label} ({who}) · {question}"


def _subject(escalation: dict) -> str:
    """The subject's label, after whose it is once claimed or assigned ("@alice "): cut last."""
    label = (escalation.get("subject") or {}).get("label", "")
    return f"@{escalation['assignee']} {label}" if escalation.get("assignee") else label


class EscalationTable(DataTable):
    DEFAULT_CSS = """
    EscalationTable { height: 1fr; }
    """

    widths: dict[str, int] = BASE_WIDTHS
    _shown: tuple[list[dict], int] = ([], 0)

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self._add_columns()

    def _add_columns(self) -> None:
        for label, key, _ in COLUMNS:
            self.add_column(label, key=key, width=self.widths[key])

    def on_resize(self, event: events.Resize) -> None:
        widths = column_widths(event.size.width)
        if widths == self.widths:
            return
        self.widths = widths
        current = self.current_id()
        self.clear(columns=True)
        self._add_columns()
        self.show(*self._shown, keep=current)

    def show(self, escalations: list[dict], now_ms: int, *, keep: str | None = None) -> None:
        """Show ``escalations`` in this order, keeping the cursor on the same one (or on ``keep``)."""
        self._shown = (escalations, now_ms)
        ids = [e["id"] for e in escalations]
        if ids == [key.value for key in self.rows]:
            # Same rows (the common case, once a second): update in place, no flicker.
            for escalation in escalations:
                cells = row_cells(escalation, now_ms, widths=self.widths)
                for (_, column, _), cell in zip(COLUMNS, cells, strict=True):
                    self.update_cell(escalation["id"], column, cell)
            return
        current = keep or self.current_id()
        self.clear()
        for escalation in escalations:
            self.add_row(*row_cells(escalation, now_ms, widths=self.widths), key=escalation["id"])
        if current in ids:
            self.move_cursor(row=ids.index(current), animate=False)

    def current_id(self) -> str | None:
        if not self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return row_key.value
