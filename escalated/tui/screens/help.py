"""``?``: every key in one place."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """\
[b]escalated review[/] — decide what your agents escalated to you

[b]Inbox[/]
  ↑ ↓ move      enter detail     r refresh now
  a acknowledge d decide         c cancel (with a reason)
  m claim: assign it to me (others may still decide)
  f status view: open, resolved, cancelled, all
  p policy filter                s sort: deadline, newest, oldest, policy

[b]Detail[/]  a d c as above · t retry a failed callback · escape back

[b]Decide form[/]
  tab next field · space pick a choice · ctrl+s send · escape back
  Numbers honour min and step; problems show before anything is sent.
  "Remember" decides new ones from the same agent about the same kind
  of subject the same way, for the time picked (without response fields).

[b]SLA[/]  [green]green[/] plenty left · [yellow]amber[/] under half · [red]red[/] under a fifth
     or the last minute · [reverse red]overdue[/] default choice applies.
Decided, timed-out and cancelled ones leave the open view.

? this help · q quit"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help { width: 78; height: auto; max-height: 23; border: thick $accent; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(HELP)

    def action_close(self) -> None:
        self.dismiss(None)
