"""``ReviewApp``: the reviewer TUI.

The app owns the reviewer's copy of the escalations and keeps it fresh two
ways: the ``GET /events`` stream (instant) and a list poll every
``poll_interval_s`` (the fallback while the stream is missing or down).
Screens read ``app.escalations`` and redraw on ``EscalationsChanged``.
Actions go through the injected backend in workers; failures become one
plain line in the status bar and a refresh, never a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import traceback
from collections.abc import Callable

from textual import work
from textual.app import App
from textual.binding import Binding

from escalated.agent.client import ApiError
from escalated.timeutil import now_ms
from escalated.tui import views
from escalated.tui.backend import Backend, describe_error
from escalated.tui.format import LIVE_STATUSES
from escalated.tui.messages import EscalationsChanged, StatusChanged
from escalated.tui.screens.cancel import CancelScreen
from escalated.tui.screens.decide import DecideScreen
from escalated.tui.screens.detail import DetailScreen
from escalated.tui.screens.help import HelpScreen
from escalated.tui.screens.inbox import InboxScreen

PAGE_SIZE = 100
# A reviewer's queue beyond this many is not something a terminal can show anyway.
MAX_PAGES = 10


def _chain(error: BaseException) -> list[BaseException]:
    """The error and those it was raised from or during (the report shows them all)."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


class ReviewApp(App[None]):
    TITLE = "escalated review"
    # The palette adds nothing here and its footer key pushes ours off an 80-column line.
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("question_mark", "help", "Help"), Binding("q", "quit", "Quit")]

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Callable[[], int] = now_ms,
        poll_interval_s: float = 1.0,
        stream: bool = True,
        banner: str | None = None,
    ) -> None:
        super().__init__()
        # A line that stays on the inbox while the app runs (the demo's web sign-in link).
        self.banner = banner
        self.backend = backend
        self.clock = clock
        self.poll_interval_s = poll_interval_s
        self.stream = stream
        self.escalations: dict[str, dict] = {}
        self.status: tuple[str, str] = ("Loading…", "info")
        self._lost_connection = False
        self._loaded = False
        self.stream_connected = False
        self.sub_title = backend.base_url

    def _fatal_error(self) -> None:
        """Textual's crash report, without the variables of the frames that raised.

        Textual renders an unhandled error's traceback with ``show_locals=True``
        (no option turns it off), and a frame inside a request holds the
        reviewer's token in its headers. Those frames have finished; clearing
        them (``traceback.clear_frames``) leaves the report's lines and drops
        their variables. Textual's own method does the rest.
        """
        error = sys.exc_info()[1]
        if error is not None:
            for link in _chain(error):
                traceback.clear_frames(link.__traceback__)
        super()._fatal_error()

    def get_default_screen(self) -> InboxScreen:
        return InboxScreen()

    def on_mount(self) -> None:
        self.poll_loop()
        if self.stream:
            self.stream_loop()

    # -- keeping the copy fresh -----------------------------------------

    async def fetch(self) -> None:
        """Replace the copy with the server's list; report (not raise) failures."""
        try:
            items = await self._list_all()
        except ApiError as error:
            self._lost_connection = True
            self.show_status(describe_error(error, doing="loading the inbox"), "error")
            return
        if self._lost_connection or not self._loaded:
            self._lost_connection, self._loaded = False, True
            self.show_status(f"{len(items)} escalation(s) visible to you. Press ? for help.", "info")
        fresh = views.merge(self.escalations, items)
        if fresh != self.escalations:
            self.escalations = fresh
            self.publish()

    async def _list_all(self) -> list[dict]:
        items: list[dict] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await self.backend.list_escalations(limit=PAGE_SIZE, cursor=cursor)
            items.extend(page["data"])
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return items

    @work(group="poll", exclusive=True)
    async def poll_loop(self) -> None:
        while True:
            await self.fetch()
            await asyncio.sleep(self.poll_interval_s)

    @work(group="stream", exclusive=True)
    async def stream_loop(self) -> None:
        try:
            # aclosing: when the app quits, the stream's HTTP response is closed too.
            async with contextlib.aclosing(self.backend.events(on_connect=self._stream_connected)) as events:
                async for event in events:
                    escalation = event.data.get("escalation")
                    if isinstance(escalation, dict) and "id" in escalation:
                        self.apply(escalation)
        except ApiError:
            # No /events on this server, or not allowed: the poll carries on alone.
            return

    def _stream_connected(self) -> None:
        # Whatever happened while the stream was down is only in the list.
        self.stream_connected = True
        self.refresh_now()

    @work(group="refresh", exclusive=True)
    async def refresh_now(self) -> None:
        await self.fetch()

    def apply(self, escalation: dict) -> None:
        current = self.escalations.get(escalation["id"])
        if views.newer(current, escalation) != current:
            self.escalations[escalation["id"]] = escalation
            self.publish()

    def publish(self) -> None:
        for screen in self.screen_stack:
            screen.post_message(EscalationsChanged())

    def show_status(self, text: str, level: str = "info") -> None:
        self.status = (text, level)
        for screen in self.screen_stack:
            screen.post_message(StatusChanged(text, level))

    # -- actions (shared by the inbox and the detail screen) -------------

    def _label(self, escalation_id: str) -> str:
        escalation = self.escalations.get(escalation_id) or {}
        return (escalation.get("subject") or {}).get("label") or escalation_id

    def _still_live(self, escalation_id: str) -> dict | None:
        """The escalation if it can still be acted on; otherwise say why not."""
        escalation = self.escalations.get(escalation_id)
        if escalation is None:
            return None
        if escalation.get("status") not in LIVE_STATUSES:
            self.show_status(f"{self._label(escalation_id)} is already {escalation.get('status')}.", "error")
            return None
        return escalation

    def open_detail(self, escalation_id: str) -> None:
        self.push_screen(DetailScreen(escalation_id))

    def acknowledge(self, escalation_id: str) -> None:
        if self._still_live(escalation_id) is not None:
            self._acknowledge(escalation_id)

    @work(group="actions")
    async def _acknowledge(self, escalation_id: str) -> None:
        try:
            self.apply(await self.backend.acknowledge(escalation_id))
        except ApiError as error:
            await self.explain(error, escalation_id, doing="acknowledging")
            return
        self.show_status(f"Acknowledged {self._label(escalation_id)}.", "ok")

    def claim(self, escalation_id: str) -> None:
        if self._still_live(escalation_id) is not None:
            self._claim(escalation_id)

    @work(group="actions")
    async def _claim(self, escalation_id: str) -> None:
        try:
            self.apply(await self.backend.claim(escalation_id))
        except ApiError as error:
            await self.explain(error, escalation_id, doing="claiming")
            return
        self.show_status(f"Claimed {self._label(escalation_id)}: it is yours (others may still decide).", "ok")

    @work(group="actions")
    async def retry_callback(self, escalation_id: str) -> None:
        try:
            await self.backend.retry_delivery(escalation_id)
        except ApiError as error:
            await self.explain(error, escalation_id, doing="retrying the callback of")
            return
        self.show_status(f"Callback of {self._label(escalation_id)} queued again.", "ok")

    def open_decide(self, escalation_id: str) -> None:
        escalation = self._still_live(escalation_id)
        if escalation is None:
            return

        not_remembered: list[str] = []  # said after the form closes, not overwritten by "Decided"

        async def send(choice: str, reason: str | None, response: dict | None, remember_for: str | None = None) -> dict:
            decided = await self.backend.decide(escalation_id, choice=choice, reason=reason, response=response)
            if remember_for is not None:  # decided already: a refused rule is said, not undone
                not_remembered.extend(await self._remember(escalation, choice=choice, reason=reason, lifetime=remember_for))
            return decided

        def after(outcome: dict | ApiError | None) -> None:
            self._after(outcome, escalation_id, doing="deciding", done="Decided")
            if not_remembered:
                self.show_status(not_remembered[0], "error")

        self.push_screen(DecideScreen(escalation, send=send), after)

    async def _remember(self, escalation: dict, *, choice: str, reason: str | None, lifetime: str) -> list[str]:
        """The same decision for new escalations from this agent about this kind of
        subject (CONTRACT §15); why not, in words, when the server refuses."""
        subject = escalation.get("subject") or {}
        try:
            await self.backend.create_rule(
                policy=escalation["policy"], choice=choice, expires_in=lifetime,
                match={"agentId": escalation["agentId"], "subjectType": subject.get("type")},
                reason=reason or f"remembered when deciding {escalation['id']}",
            )  # fmt: skip
        except ApiError as error:
            return [describe_error(error, doing="remembering the decision")]
        return []

    def open_cancel(self, escalation_id: str) -> None:
        escalation = self._still_live(escalation_id)
        if escalation is None:
            return

        async def send(reason: str | None) -> dict:
            return await self.backend.cancel(escalation_id, reason=reason)

        self.push_screen(
            CancelScreen(escalation, send=send),
            lambda outcome: self._after(outcome, escalation_id, doing="cancelling", done="Cancelled"),
        )

    def _after(self, outcome: dict | ApiError | None, escalation_id: str, *, doing: str, done: str) -> None:
        if isinstance(outcome, ApiError):
            self._explain_in_worker(outcome, escalation_id, doing)
        elif isinstance(outcome, dict):
            self.apply(outcome)
            self.show_status(f"{done} {self._label(escalation_id)}.", "ok")

    @work(group="actions")
    async def _explain_in_worker(self, error: ApiError, escalation_id: str, doing: str) -> None:
        await self.explain(error, escalation_id, doing=doing)

    async def explain(self, error: ApiError, escalation_id: str, *, doing: str) -> None:
        """Say what went wrong in one line, then show the server's current truth."""
        text = describe_error(error, doing=f"{doing} {self._label(escalation_id)}")
        if error.status == 409:
            text = await self._explain_conflict(escalation_id, doing) or text
        self.show_status(text, "error")
        await self.fetch()

    async def _explain_conflict(self, escalation_id: str, doing: str) -> str | None:
        try:
            current = await self.backend.get_escalation(escalation_id)
        except ApiError:
            return None
        self.apply(current)
        label = self._label(escalation_id)
        if resolution := current.get("resolution"):
            who = "the SLA timeout" if resolution.get("resolvedBy") == "timeout" else resolution.get("answeredBy")
            return f"Too late ({doing} {label}): already decided by {who} ({resolution.get('choice')})."
        if cancellation := current.get("cancellation"):
            return f"Too late ({doing} {label}): already cancelled by {cancellation.get('cancelledBy')}."
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # In a half-filled form, a stray "q" must not throw the reviewer's work away.
        return not (action == "quit" and isinstance(self.screen, (DecideScreen, CancelScreen)))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())
