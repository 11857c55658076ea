"""The inbox: the escalations routed to the reviewer, live."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from escalated.tui import views
from escalated.tui.components.escalation_table import EscalationTable
from escalated.tui.components.filter_bar import FilterBar
from escalated.tui.components.status_line import StatusLine
from escalated.tui.messages import EscalationsChanged, StatusChanged

if TYPE_CHECKING:
    from escalated.tui.app import ReviewApp

# How often ages and countdowns are redrawn.
TICK_S = 1.0
# Clicking one of these column headers sorts by it.
HEADER_SORT = {"sla": "deadline", "age": "newest", "policy": "policy"}


class InboxScreen(Screen[None]):
    if TYPE_CHECKING:
        app: ReviewApp  # the screens run in ReviewApp only; it has the actions they call

    BINDINGS = [
        Binding("a", "acknowledge", "Ack"),
        Binding("m", "claim", "Claim", show=False),
        Binding("d", "decide", "Decide"),
        Binding("c", "cancel_escalation", "Cancel"),
        Binding("enter", "open_detail", "Detail", show=False),
        Binding("f", "cycle_view", "Status"),
        Binding("p", "cycle_policy", "Policy"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("r", "refresh", "Refresh", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.view = "open"
        self.policy: str | None = None
        self.sort = "deadline"

    DEFAULT_CSS = """
    InboxScreen #banner { height: auto; padding: 0 1; background: $boost; }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        if self.app.banner:
            # Wraps rather than cuts: a sign-in link must stay whole to be copied.
            yield Static(self.app.banner, id="banner", markup=False)
        yield FilterBar(id="filters")
        yield EscalationTable(id="inbox")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(StatusLine).show(*self.app.status)
        self.redraw()
        self.set_interval(TICK_S, self.redraw)

    def redraw(self) -> None:
        everything = list(self.app.escalations.values())
        shown = views.select(everything, view=self.view, policy=self.policy, sort=self.sort)
        self.query_one(EscalationTable).show(shown, self.app.clock())
        self.query_one(FilterBar).show(
            view=self.view, policy=self.policy, sort=self.sort, shown=len(shown), total=len(everything)
        )

    def selected_id(self) -> str | None:
        return self.query_one(EscalationTable).current_id()

    @on(EscalationsChanged)
    def _escalations_changed(self) -> None:
        self.redraw()

    @on(StatusChanged)
    def _status_changed(self, message: StatusChanged) -> None:
        self.query_one(StatusLine).show(message.text, message.level)

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open_detail()

    @on(DataTable.HeaderSelected)
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        # Mouse users sort by clicking a header; the keyboard has `s`.
        self.sort = HEADER_SORT.get(str(event.column_key.value), self.sort)
        self.redraw()

    def action_cycle_view(self) -> None:
        self.view = views.next_in(tuple(views.VIEWS), self.view)
        self.redraw()

    def action_cycle_policy(self) -> None:
        self.policy = views.policy_cycle(self.app.escalations.values(), self.policy)
        self.redraw()

    def action_cycle_sort(self) -> None:
        self.sort = views.next_in(views.SORTS, self.sort)
        self.redraw()

    def action_refresh(self) -> None:
        self.app.refresh_now()

    def action_open_detail(self) -> None:
        if (escalation_id := self.selected_id()) is not None:
            self.app.open_detail(escalation_id)

    def action_acknowledge(self) -> None:
        if (escalation_id := self.selected_id()) is not None:
            self.app.acknowledge(escalation_id)

    def action_decide(self) -> None:
        if (escalation_id := self.selected_id()) is not None:
            self.app.open_decide(escalation_id)

    def action_claim(self) -> None:
        if (escalation_id := self.selected_id()) is not None:
            self.app.claim(escalation_id)

    def action_cancel_escalation(self) -> None:
        if (escalation_id := self.selected_id()) is not None:
            self.app.open_cancel(escalation_id)
