"""Messages the app posts to its screens."""

from __future__ import annotations

from textual.message import Message


class EscalationsChanged(Message):
    """The app's copy of the escalations changed (poll, stream or an action)."""


class StatusChanged(Message):
    """The one-line status (errors, confirmations) changed."""

    def __init__(self, text: str, level: str) -> None:
        super().__init__()
        self.text = text
        self.level = level
