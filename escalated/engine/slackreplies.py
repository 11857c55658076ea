"""Replies to a Slack click, POSTed to the click's ``response_url``.

Not through the outbox, on purpose. A reply shows state that is already
durable: the decision and its callback were committed together before the
reply was written. The ``response_url`` lives 30 minutes and takes five
posts, so a reply retried after a restart would mostly fail anyway; a lost
one leaves the buttons showing, and the next click is re-checked and told
who decided. A refusal only means something to the clicker right away. And
the outbox would keep a bearer URL for the message in the database for no
gain. So: a few quick tries in the background, after Slack has had its 200
(Slack wants an answer within 3 seconds), through the sender's URL rules.

The URL was judged by ``literal_problem`` before the click was acted on;
the session vets every address it connects to (``transport.open_session``),
with the ``--allow-callback-host`` exemptions callbacks have.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import orjson

from escalated import __version__
from escalated.domain.urlsafety import CallbackRules
from escalated.engine import transport

log = logging.getLogger(__name__)
TRIES = 3
FIRST_WAIT_S = 0.5
HEADERS = {"Content-Type": "application/json", "User-Agent": f"escalated/{__version__}"}


class SlackReplies:
    def __init__(self, *, rules: CallbackRules, timeout_s: float) -> None:
        self._rules = rules
        self._timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task] = set()

    async def __aenter__(self) -> SlackReplies:
        self._session = transport.open_session(rules=self._rules, limit=8)
        return self

    async def __aexit__(self, *exc_info) -> None:
        # Replies in flight get a moment to finish; the rest are dropped (see above).
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2.0)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    def send(self, url: str, body: dict, *, escalation_id: str) -> None:
        """Post ``body`` to ``url`` in the background."""
        task = asyncio.create_task(self._post(url, orjson.dumps(body), escalation_id=escalation_id), name="slack-reply")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, url: str, body: bytes, *, escalation_id: str) -> None:
        assert self._session is not None
        wait_s = FIRST_WAIT_S
        for attempt in range(1, TRIES + 1):
            outcome = await transport.post(
                self._session, url, body=body, headers=HEADERS, timeout_s=self._timeout_s, rules=self._rules
            )
            if outcome.ok:
                return
            # Never the URL itself: it lets whoever holds it rewrite the message.
            error = (outcome.error or "").replace(url, "<response_url>")
            log.warning("escalation %s: Slack reply attempt %d of %d failed: %s", escalation_id, attempt, TRIES, error)
            if outcome.permanent:  # a refused address: trying again cannot help
                return
            if attempt < TRIES:
                await asyncio.sleep(wait_s)
                wait_s *= 4
