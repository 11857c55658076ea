"""A real server for the API tests, shared per module, on either backend.

``LiveServer`` runs the real app (``create_app``, SLA clock and sender
included) on port 0 in a thread of its own, with a clock the test can move
(``advance``: tests/support/clock.py), against a SQLite file in a
temporary directory or a PostgreSQL database (the module-scoped ``live``
runs each module once per backend: see tests/conftest.py). Tests talk to it
over real HTTP with ``Http`` (tests/support/http.py: stdlib ``http.client``,
so a test can send any bytes, headers or chunking it likes). Set-up goes through the running app's
core (``AdminService``, as the operator of a workspace) on the server's own
event loop (tests/support/setup.py): nothing of ours is mocked, and nothing
is SQLite-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from escalated.core.admin import PolicyRequest
from escalated.domain.scopes import ALL_SCOPES
from escalated.http.appkeys import ADMIN, CLOCK, SENDER, SERVICE
from escalated.core.settings import Settings, parse_db
from tests.conftest import fresh_db
from tests.support import setup
from tests.support.api import escalation_body, unique
from tests.support.clock import MovableClock
from tests.support.http import Http
from tests.support.threaded import ThreadedServer


class LiveServer:
    """The real app on 127.0.0.1:0 in a background thread with its own loop."""

    def __init__(self, db: Path | str, **settings: Any) -> None:
        self.db = db  # a SQLite file or a postgresql:// URL, as --db takes it
        self.clock = MovableClock()  # every part of the server reads it (advance moves it)
        self.settings = Settings(db_path=parse_db(db), port=0, clock=self.clock, **settings)
        self.url = ""
        self._server = ThreadedServer("live-server")

    def start(self) -> LiveServer:
        from escalated.server import create_app

        self.url = self._server.start(lambda: create_app(self.settings), handle_signals=False)
        self.app[SERVICE].listening_at(self.url)  # links in emails lead here, as serve's do
        self.api = Http(self.url)
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def app(self) -> web.Application:
        return self._server.app

    def advance(self, seconds: float) -> None:
        """Move the server's clock on by ``seconds``, and have the SLA clock
        and the sender look at once (they sleep by the wall clock until
        their next due time)."""
        self.clock.advance(seconds)

        async def wake() -> None:
            for key in (CLOCK, SENDER):
                if key in self.app:
                    self.app[key].wake()

        self._run(wake)

    # -- set-up through the running app's core, as an admin of the workspace ---

    def _run(self, make: Any) -> Any:
        """Run the coroutine ``make()`` on the server's loop; its result."""
        return self._server.run(make)

    def workspace(self, name: str | None = None) -> str:
        name = name or unique("ws")
        self._run(lambda: setup.add_workspace(self.app, name))
        return name

    def key(self, *scopes: str, workspace: str = "default", name: str | None = None, expires_ms: int | None = None) -> str:
        wanted = frozenset(scopes or ALL_SCOPES)
        return self._run(lambda: setup.add_key(self.app, workspace=workspace, name=name, scopes=wanted, expires_ms=expires_ms))

    def key_id(self, secret: str) -> str:
        """The id of a live key (revoked or expired ones are not found)."""
        return self._run(lambda: self.app[ADMIN].principal_for(secret)).id

    def user(self, name: str, *groups: str, role: str = "reviewer", workspace: str = "default") -> str:
        return self._run(lambda: setup.add_user(self.app, name, workspace=workspace, role=role, groups=tuple(groups)))

    def policy(
        self,
        key: str | None = None,
        *,
        workspace: str = "default",
        reviewers: tuple[str, ...] = (),
        sla: str | None = None,
        default_choice: str | None = None,
    ) -> str:
        key = key or f"{unique('p')}.test"
        request = PolicyRequest(
            key=key, reviewers=reviewers, sla=sla, default_choice=default_choice, allow_unknown_reviewers=True
        )
        self._run(lambda: setup.set_policy(self.app, request, workspace=workspace))
        return key

    # -- escalations ----------------------------------------------------------

    def create(self, token: str, **overrides: Any) -> dict:
        resp = self.api.post("/escalations", token=token, json_body=escalation_body(**overrides))
        assert resp.status == 201, resp.body
        return resp.json()


@pytest.fixture(scope="module")
def live(request, backend, tmp_path_factory) -> LiveServer:
    """One real server per test module and backend, with policy ``refunds.large`` (no SLA, no reviewers)."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("live")) as db:
        server = LiveServer(db).start()
        server.policy("refunds.large")
        yield server
        server.stop()


@pytest.fixture(scope="module")
def admin_key(live) -> str:
    """An all-scope API key of workspace ``default``, named ``ci-bot``."""
    return live.key(name="ci-bot")


@pytest.fixture
def api(live) -> Http:
    return live.api
