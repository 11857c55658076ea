"""One line under the table: what just happened, or what went wrong."""

from __future__ import annotations

from textual.widgets import Static

LEVELS = ("info", "ok", "error")


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    StatusLine.-ok { color: $success; }
    StatusLine.-error { background: $error 30%; color: $text; text-style: bold; }
    """

    def show(self, text: str, level: str = "info") -> None:
        for name in LEVELS:
            self.set_class(name == level, f"-{name}")
        self.update(text)
