"""The TUI uses the width it has, and the picked choice shows without colour (issue 12, point 15).

Pilot against the shared real server (tests/tui/conftest.py).
"""

from __future__ import annotations

from textual.widgets import RadioButton

from escalated.tui.components.escalation_table import EscalationTable, column_widths
from escalated.tui.screens.decide import DecideScreen
from tests.tui.conftest import create, wait_until

LONG_LABEL = "Order #981 for the damaged espresso machine that arrived nine days late"


def question_cell(app, escalation_id: str) -> str:
    return str(app.screen.query_one(EscalationTable).get_row(escalation_id)[3])


async def test_at_120_columns_the_question_gets_the_extra_width(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, label=LONG_LABEL)
        app, client = setup.app()
        async with client, app.run_test(size=(120, 30)) as pilot:
            await wait_until(pilot, lambda: app.screen.query_one(EscalationTable).row_count, what="the first load")
            shown = question_cell(app, escalation["id"])
            assert len(shown) > 40 and shown.rstrip("…") in f"Refund {LONG_LABEL}?"


async def test_at_80_columns_the_table_keeps_its_base_widths(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, label=LONG_LABEL)
        app, client = setup.app()
        async with client, app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.screen.query_one(EscalationTable).row_count, what="the first load")
            assert len(question_cell(app, escalation["id"])) == column_widths(80)["question"]


async def test_resizing_the_terminal_rewraps_the_rows(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, label=LONG_LABEL)
        app, client = setup.app()
        async with client, app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.screen.query_one(EscalationTable).row_count, what="the first load")
            narrow = question_cell(app, escalation["id"])
            await pilot.resize_terminal(140, 30)
            await wait_until(pilot, lambda: len(question_cell(app, escalation["id"])) > len(narrow), what="wider cells")


async def test_the_picked_choice_is_marked_without_colour(setup):
    async with setup.agent() as agent:
        await create(agent)
        app, client = setup.app()
        async with client, app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.screen.query_one(EscalationTable).row_count, what="the first load")
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen), what="the decide form")
            buttons = list(app.screen.query(RadioButton))
            marks = lambda: [button.render().plain.strip("▐▌ ")[0] for button in buttons]  # noqa: E731
            assert marks() == ["○", "○"]
            await pilot.press("down", "enter")  # the second choice
            await wait_until(pilot, lambda: marks() == ["○", "●"], what="the mark on the picked choice")


async def test_resizing_keeps_the_cursor_on_the_same_escalation(setup):
    async with setup.agent() as agent:
        await create(agent, label="Order #1")
        second = await create(agent, label="Order #2")
        app, client = setup.app()
        async with client, app.run_test(size=(80, 24)) as pilot:
            table = app.screen.query_one(EscalationTable)
            await wait_until(pilot, lambda: table.row_count == 2, what="both rows")
            table.move_cursor(row=[key.value for key in table.rows].index(second["id"]))
            await pilot.resize_terminal(140, 30)
            await wait_until(pilot, lambda: table.widths != column_widths(80), what="the wider columns")
            assert table.current_id() == second["id"]
