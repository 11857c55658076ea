"""Server-Sent Events: the value object and a line-fed parser (used by the client)."""

from __future__ import annotations

import json

import attrs


@attrs.frozen
class Event:
    """One Server-Sent Event from ``GET /events``."""

    event: str
    id: str | None
    data: dict



class SseParser:
    """The text/event-stream format (WHATWG HTML §9.2), fed one line at a time."""

    def __init__(self) -> None:
        self._event = ""
        self._id: str | None = None
        self._data: list[str] = []

    def feed(self, line: str) -> Event | None:
        line = line.rstrip("\r\n")
        if not line:
            return self._dispatch()
        if line.startswith(":"):  # a comment, e.g. the keep-alive ": ping"
            return None
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        elif field == "id" and "\0" not in value:
            self._id = value
        return None

    def _dispatch(self) -> Event | None:
        if not self._data:
            self._event = ""
            return None
        text = "\n".join(self._data)
        try:
            data = json.loads(text)
        except ValueError:
            data = {"raw": text}
        if not isinstance(data, dict):
            data = {"raw": data}
        # The id persists across events, as the spec says: it is the last seen.
        event = Event(event=self._event or "message", id=self._id, data=data)
        self._event, self._data = "", []
        return event


__all__ = ["Event", "SseParser"]
