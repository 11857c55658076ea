"""The decide form: a choice, the response fields, a reason.

Every field is checked before anything is sent and problems are written
under the field. ``send`` is injected: the app passes a call to the backend,
so the form neither knows nor cares where the decision goes. A 422 from the
server stays in the form; any other failure closes it and the app explains.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, RadioButton, RadioSet, Select, Static

from escalated.agent.client import ApiError
from escalated.tui.validation import NULL, check_form, number_hint

# send(choice, reason, response, remember_for): remember_for is a rule's
# lifetime ("24h") when "remember" is ticked, else None.
Send = Callable[[str, str | None, dict | None, str | None], Awaitable[dict]]
REMEMBER_FOR = (("for 1 hour", "1h"), ("for 24 hours", "24h"), ("for 7 days", "7d"), ("for 30 days", "30d"))


class ChoiceButton(RadioButton):
    """A radio button whose mark shows its state without colour: ● picked, ○ not
    (the stock button draws ● either way and relies on colour alone)."""

    BUTTON_INNER = "○"

    def watch_value(self) -> None:
        self.BUTTON_INNER = "●" if self.value else "○"
        super().watch_value()
        self.refresh()


class DecideScreen(ModalScreen["dict | ApiError | None"]):
    DEFAULT_CSS = """
    DecideScreen { align: center middle; }
    #dialog { width: 74; height: auto; max-height: 22; border: thick $accent; background: $surface; padding: 0 1; }
    #dialog .title { text-style: bold; }
    #dialog .question { margin-bottom: 1; }
    #dialog .row { height: 1; margin-top: 1; }
    #dialog .row Label { width: 22; }
    #dialog .keys { color: $text-muted; margin-top: 1; }
    #dialog .row Input, #dialog .row Select { width: 1fr; }
    #dialog RadioSet { width: 1fr; }
    #dialog .error { color: $error; height: auto; }
    #dialog .error.-empty { display: none; }
    #dialog #buttons { height: 1; margin-top: 1; }
    #dialog #buttons Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "dismiss_form", "Back"), Binding("ctrl+s", "submit", "Send")]

    def __init__(self, escalation: dict, *, send: Send) -> None:
        super().__init__()
        self.escalation = escalation
        self.fields: list[dict] = escalation.get("responseFields") or []
        self._send = send

    def compose(self) -> ComposeResult:
        label = (self.escalation.get("subject") or {}).get("label", "")
        with VerticalScroll(id="dialog"):
            yield Static(f"Decide · {label}", classes="title", markup=False)
            yield Static(self.escalation.get("question", ""), classes="question", markup=False)
            with RadioSet(id="choice", compact=True):
                for choice in self.escalation.get("choices", []):
                    yield ChoiceButton(choice["label"], name=choice["id"])
            yield self._error("choice")
            for index, field in enumerate(self.fields):
                with Horizontal(classes="row"):
                    yield Label(self._field_label(field))
                    yield self._field_widget(index, field)
                yield self._error(f"field-{index}")
            with Horizontal(classes="row"):
                yield Label("Reason (optional)")
                yield Input(id="reason", placeholder="recorded with the decision", compact=True)
            if not self.fields:  # a rule holds no response: offered only where none is asked
                with Horizontal(classes="row"):
                    yield Checkbox("Remember for matching escalations", id="remember", compact=True)
                    yield Select(REMEMBER_FOR, id="remember-for", value="24h", allow_blank=False, compact=True)
            yield self._error("form")
            with Horizontal(id="buttons"):
                yield Button("Decide", id="submit", variant="primary", compact=True)
                yield Button("Back", id="back", compact=True)
            yield Static("tab next · space pick · ctrl+s send · escape back", classes="keys")

    @staticmethod
    def _error(key: str) -> Static:
        return Static("", id=f"error-{key}", classes="error -empty", markup=False)

    @staticmethod
    def _field_label(field: dict) -> str:
        return field.get("label") or field["name"]

    @staticmethod
    def _field_widget(index: int, field: dict) -> Input | Select:
        if field.get("type") == "number":
            return Input(id=f"field-{index}", placeholder=number_hint(field) or "a number", compact=True)
        options = [(o["label"], o["value"]) for o in field.get("options", [])]
        return Select(options, id=f"field-{index}", prompt="pick one", compact=True)

    def on_mount(self) -> None:
        self.query_one(RadioSet).focus()

    def chosen(self) -> str | None:
        button = self.query_one(RadioSet).pressed_button
        return None if button is None else button.name

    def raw_values(self) -> dict[str, object]:
        values: dict[str, object] = {}
        for index, field in enumerate(self.fields):
            widget = self.query_one(f"#field-{index}")
            if isinstance(widget, Input):
                values[field["name"]] = widget.value
            else:
                assert isinstance(widget, Select)  # a field is an Input or a Select
                values[field["name"]] = NULL if widget.value is Select.NULL else widget.value
        return values

    def show_error(self, key: str, text: str) -> None:
        widget = self.query_one(f"#error-{key}", Static)
        widget.update(text)
        widget.set_class(not text, "-empty")

    @on(Button.Pressed, "#submit")
    @on(Input.Submitted)
    def action_submit(self) -> None:
        result = check_form(self.fields, choice=self.chosen(), values=self.raw_values())
        self.show_error("choice", result.errors.get("choice", ""))
        for index, field in enumerate(self.fields):
            problem = result.errors.get(field["name"], "")
            self.show_error(f"field-{index}", f"{field.get('label', field['name'])}: {problem}" if problem else "")
        self.show_error("form", "")
        if not result.ok:
            return
        reason = self.query_one("#reason", Input).value.strip() or None
        self._submit(self.chosen(), reason, result.response if self.fields else None, self.remember_for())

    def remember_for(self) -> str | None:
        """The lifetime picked when "remember" is ticked, else None."""
        boxes = self.query("#remember").results(Checkbox)
        if not any(box.value for box in boxes):
            return None
        return str(self.query_one("#remember-for", Select).value)

    @work(exclusive=True, group="decide")
    async def _submit(self, choice: str, reason: str | None, response: dict | None, remember_for: str | None) -> None:
        self.query_one("#submit", Button).disabled = True
        try:
            self.dismiss(await self._send(choice, reason, response, remember_for))
        except ApiError as error:
            if error.status != 422:
                self.dismiss(error)
                return
            problems = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in error.errors or [])
            self.show_error("form", f"The server refused it: {error.detail}" + (f" ({problems})" if problems else ""))
            self.query_one("#submit", Button).disabled = False

    @on(Button.Pressed, "#back")
    def action_dismiss_form(self) -> None:
        self.dismiss(None)
