"""Pictures of the inbox and the decide form at 80x24, against a real server.

The demo's own set-up (policies, reviewer) and sample escalations are posted
to a real ``escalated serve``. What would move between runs is pinned
without standing in for the server: the app's clock is set 90.5 s after the
last create (ages and countdowns land mid-second, so the few milliseconds
between creates never change a figure), and the header shows a fixed URL
instead of the ephemeral port. Update with --snapshot-update after checking
the new SVG by eye.
"""

from __future__ import annotations

import asyncio

import pytest

from escalated.agent.client import EscalatedClient
from escalated.commands.demo import post_samples, set_up
from escalated.timeutil import parse_timestamp_ms
from escalated.tui.app import ReviewApp
from tests.support.server import start_server
from tests.support.wait import eventually

SHOWN_URL = "http://127.0.0.1:8470"


class SnapshotApp(ReviewApp):
    """Closes its client inside the loop snap_compare runs it in."""

    async def on_unmount(self) -> None:
        await self.backend.close()


@pytest.fixture(scope="module")
def posted(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("snapshots"))

    async def prepare() -> tuple[str, int]:
        token = await set_up(server.db, breach_sla="30m")
        async with EscalatedClient(server.url, server.bootstrap_key) as agent:
            created = await post_samples(agent, resume_url="http://127.0.0.1:9/resume", secret="s")
        return token, max(parse_timestamp_ms(e["createdAt"]) for e in created)

    token, last_created_ms = asyncio.run(prepare())
    yield server, token, last_created_ms + 90_500
    server.stop()


@pytest.fixture
def sample_app(posted):
    server, token, frozen_ms = posted

    def make() -> ReviewApp:
        app = SnapshotApp(EscalatedClient(server.url, token), clock=lambda: frozen_ms, stream=False)
        app.sub_title = SHOWN_URL
        return app

    return make


async def settle(pilot) -> None:
    # The first poll fills the table; wait for it rather than for time.
    await eventually(lambda: pilot.app.escalations, interval_s=0.01, what="the first poll's rows")
    await pilot.pause()


async def open_refund_form(pilot) -> None:
    await settle(pilot)
    await pilot.press("d")  # sorted by deadline: Order #981, the refund with a number field
    await pilot.pause()


def test_inbox_snapshot(snap_compare, sample_app):
    assert snap_compare(sample_app(), run_before=settle)


def test_decide_form_snapshot(snap_compare, sample_app):
    assert snap_compare(sample_app(), run_before=open_refund_form)


def test_decide_form_with_inline_errors_snapshot(snap_compare, sample_app):
    async def refuse(pilot):
        await open_refund_form(pilot)
        pilot.app.screen.query_one("#field-0").value = "-3"
        await pilot.press("ctrl+s")
        await pilot.pause()

    assert snap_compare(sample_app(), run_before=refuse)
