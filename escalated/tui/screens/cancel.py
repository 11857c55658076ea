"""Cancel with a reason: a small dialog; ``send`` is injected like decide's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from escalated.agent.client import ApiError

SendCancel = Callable[[str | None], Awaitable[dict]]


class CancelScreen(ModalScreen["dict | ApiError | None"]):
    DEFAULT_CSS = """
    CancelScreen { align: center middle; }
    #dialog { width: 70; height: auto; border: thick $error; background: $surface; padding: 0 1; }
    #dialog .title { text-style: bold; margin-bottom: 1; }
    #dialog #buttons { height: 1; margin-top: 1; }
    #dialog #buttons Button { margin-right: 2; }
    #dialog .note { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "back", "Back")]

    def __init__(self, escalation: dict, *, send: SendCancel) -> None:
        super().__init__()
        self.escalation = escalation
        self._send = send

    def compose(self) -> ComposeResult:
        label = (self.escalation.get("subject") or {}).get("label", "")
        with Vertical(id="dialog"):
            yield Static(f"Cancel · {label}", classes="title", markup=False)
            yield Static("No callback is sent for a cancellation; the agent is not resumed.", classes="note")
            yield Input(id="reason", placeholder="reason (recorded in the history)", compact=True)
            with Horizontal(id="buttons"):
                yield Button("Cancel escalation", id="confirm", variant="error", compact=True)
                yield Button("Back", id="back", compact=True)

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    @on(Button.Pressed, "#confirm")
    @on(Input.Submitted)
    def confirm(self) -> None:
        self._submit(self.query_one("#reason", Input).value.strip() or None)

    @work(exclusive=True, group="cancel")
    async def _submit(self, reason: str | None) -> None:
        self.query_one("#confirm", Button).disabled = True
        try:
            self.dismiss(await self._send(reason))
        except ApiError as error:
            self.dismiss(error)

    @on(Button.Pressed, "#back")
    def action_back(self) -> None:
        self.dismiss(None)
