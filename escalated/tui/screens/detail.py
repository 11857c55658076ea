"""One escalation in full: question, subject, evidence, choices, history,
and the delivery status of its callback."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from escalated.agent.client import ApiError
from escalated.tui import detail_text
from escalated.tui.components.status_line import StatusLine
from escalated.tui.messages import EscalationsChanged, StatusChanged

if TYPE_CHECKING:
    from escalated.tui.app import ReviewApp

# Deliveries are not in the event stream; re-read them this often.
DELIVERIES_POLL_S = 2.0


class DetailScreen(Screen[None]):
    if TYPE_CHECKING:
        app: ReviewApp  # the screens run in ReviewApp only; it has the actions they call

    DEFAULT_CSS = """
    DetailScreen #body { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [
        Binding("a", "acknowledge", "Ack"),
        Binding("m", "claim", "Claim"),
        Binding("d", "decide", "Decide"),
        Binding("c", "cancel_escalation", "Cancel"),
        Binding("t", "retry_callback", "Retry callback"),
        Binding("escape,backspace", "back", "Back"),
    ]

    def __init__(self, escalation_id: str) -> None:
        super().__init__()
        self.escalation_id = escalation_id
        self.delivery_items: list[dict] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="body"):
            yield Static(id="summary")
            yield Static(id="callback")
            yield Static(id="details")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(StatusLine).show(*self.app.status)
        self.query_one("#body").focus()  # so arrow keys scroll a long detail
        self.redraw()
        self.load_deliveries()
        self.set_interval(1.0, self.redraw)
        self.set_interval(DELIVERIES_POLL_S, self.load_deliveries)

    def redraw(self) -> None:
        escalation = self.app.escalations.get(self.escalation_id)
        if escalation is None:
            self.query_one("#summary", Static).update("This escalation is no longer visible to you.")
            return
        self.query_one("#summary", Static).update(detail_text.summary(escalation, self.app.clock()))
        self.query_one("#callback", Static).update(detail_text.deliveries(escalation, self.delivery_items))
        self.query_one("#details", Static).update(detail_text.body(escalation))

    @work(exclusive=True, group="deliveries")
    async def load_deliveries(self) -> None:
        try:
            self.delivery_items = await self.app.backend.deliveries(self.escalation_id)
        except ApiError:
            # The status line already reports connection trouble from the poll.
            self.delivery_items = None
        self.refresh_bindings()
        self.redraw()

    @on(EscalationsChanged)
    def _escalations_changed(self) -> None:
        self.redraw()

    @on(StatusChanged)
    def _status_changed(self, message: StatusChanged) -> None:
        self.query_one(StatusLine).show(message.text, message.level)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Retrying makes sense only once the server gave up on the callback.
        if action == "retry_callback":
            return any(d.get("kind") == "callback" and d.get("status") == "failed" for d in self.delivery_items or [])
        return True

    def action_retry_callback(self) -> None:
        self.app.retry_callback(self.escalation_id)

    def action_back(self) -> None:
        self.dismiss()

    def action_acknowledge(self) -> None:
        self.app.acknowledge(self.escalation_id)

    def action_decide(self) -> None:
        self.app.open_decide(self.escalation_id)

    def action_claim(self) -> None:
        self.app.claim(self.escalation_id)

    def action_cancel_escalation(self) -> None:
        self.app.open_cancel(self.escalation_id)
