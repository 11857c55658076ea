"""Pictures of the inbox and the decide form at 80x24.

Fixed sample data in memory and a frozen clock, so ages and countdowns do
not move and no generated id is on screen. Update with --snapshot-update
after checking the new SVG by eye.
"""

from escalated.timeutil import parse_timestamp_ms
from escalated.tui.app import ReviewApp
from escalated.tui.memory import MemoryBackend
from escalated.tui.samples import resources

FROZEN_MS = parse_timestamp_ms("2026-11-22T10:15:00.000Z")


def frozen() -> int:
    return FROZEN_MS


def sample_app() -> ReviewApp:
    return ReviewApp(MemoryBackend(resources(FROZEN_MS), clock=frozen), clock=frozen, stream=False)


async def settle(pilot) -> None:
    # The first poll fills the table; wait for it rather than for time.
    for _ in range(50):
        if pilot.app.escalations:
            break
        await pilot.pause(0.01)
    await pilot.pause()


def test_inbox_snapshot(snap_compare):
    assert snap_compare(sample_app(), run_before=settle)


def test_decide_form_snapshot(snap_compare):
    async def open_form(pilot):
        await settle(pilot)
        await pilot.press("down", "d")
        await pilot.pause()

    assert snap_compare(sample_app(), run_before=open_form)


def test_decide_form_with_inline_errors_snapshot(snap_compare):
    async def refuse(pilot):
        await settle(pilot)
        await pilot.press("down", "d")
        await pilot.pause()
        pilot.app.screen.query_one("#field-0").value = "-3"
        await pilot.press("ctrl+s")
        await pilot.pause()

    assert snap_compare(sample_app(), run_before=refuse)
