"""CONTRACT §15 in the reviewer TUI, with Pilot against a real server: claim
(``m``), the assignee in the inbox and the detail, and "remember for matching
escalations" in the decide form."""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, Select

from escalated.tui.components.escalation_table import EscalationTable
from escalated.tui.screens.decide import DecideScreen
from escalated.tui.screens.detail import DetailScreen
from escalated.tui.screens.inbox import InboxScreen
from tests.conftest import fresh_db
from tests.support.server import ServerProcess
from tests.tui.conftest import REFUND_FIELDS, Setup, create, prepare, server_state, wait_until
from tests.tui.test_review import SIZE, pick_first_choice, rows, status_text


@pytest.fixture(scope="module")
def shared(request, backend, tmp_path_factory) -> Setup:
    """This module's server on either backend (the TUI's other modules run on SQLite):
    claims and rules are new store code, so the TUI drives both."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("tui-ops")) as db:
        server = ServerProcess(db=db).start()
        try:
            yield prepare(server)
        finally:
            server.stop()


def detail_text(app) -> str:
    """The detail's text once it is composed (empty before)."""
    return "".join(str(w.content) for part in ("summary", "details") for w in app.screen.query(f"#{part}"))


async def test_m_claims_and_the_inbox_and_detail_show_the_assignee(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, label="Order #31")
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("m")
            after = await server_state(agent, escalation["id"], lambda e: e["assignee"])
            assert (after["assignee"], after["status"]) == ("alice", "acknowledged")
            await wait_until(pilot, lambda: "Claimed Order #31" in status_text(app), what="the claim's status line")
            table = app.screen.query_one(EscalationTable)
            await wait_until(pilot, lambda: "@alice" in str(table.get_row(escalation["id"])), what="the assignee in the row")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
            assert "assigned to  alice" in detail_text(app)


async def test_deciding_with_remember_makes_a_rule_that_decides_the_next_one(setup):
    async with setup.agent() as agent:
        first = await create(agent, policy="refunds.small", label="Order #32")
        app, client = setup.app()
        try:
            async with client, app.run_test(size=SIZE) as pilot:
                await wait_until(pilot, lambda: rows(app))
                await pilot.press("d")
                await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
                await pick_first_choice(pilot)
                app.screen.query_one("#remember", Checkbox).value = True
                app.screen.query_one("#remember-for", Select).value = "1h"
                await pilot.press("ctrl+s")
                await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen), what="the form to close")
                [rule] = [r for r in await agent.list_rules() if r["status"] == "active"]
                assert (rule["createdBy"], rule["choice"], rule["policy"]) == ("alice", "approve", "refunds.small")
                assert rule["match"] == {"agentId": "billing-agent", "subjectType": "order"}
                assert rule["reason"] == f"remembered when deciding {first['id']}"
                following = await create(agent, policy="refunds.small", label="Order #33")
                done = await server_state(agent, following["id"], lambda e: e["status"] == "resolved")
                assert done["resolution"]["answeredBy"] == f"rule:{rule['id']}"
                await wait_until(pilot, lambda: following["id"] in app.escalations, what="the decided one")
                app.open_detail(following["id"])
                await wait_until(
                    pilot,
                    lambda: isinstance(app.screen, DetailScreen) and "made in advance by alice" in detail_text(app),
                    what="the rule's decision in the detail",
                )
        finally:  # the module's server is shared: leave no rule behind
            for rule in await agent.list_rules():
                await agent.revoke_rule(rule["id"])


async def test_the_form_offers_no_remember_where_a_response_is_asked(setup):
    async with setup.agent() as agent:
        await create(agent, response_fields=REFUND_FIELDS, label="Order #34")
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
            assert not app.screen.query("#remember")


async def test_remembering_a_quorum_choice_records_the_approval_and_says_why_not_remembered(setup):
    setup.server.cli("policy", "set", "pair.approve", "--reviewer", "alice", "--quorum", "2", "--quorum-choice", "approve")
    async with setup.agent() as agent:
        escalation = await create(agent, policy="pair.approve", label="Order #35")
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
            await pick_first_choice(pilot)
            app.screen.query_one("#remember", Checkbox).value = True
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: "remembering the decision" in status_text(app), what="why it is not remembered")
            assert "a quorum" in status_text(app)
            after = await server_state(agent, escalation["id"], lambda e: e["approvals"])
            assert [a["by"] for a in after["approvals"]] == ["alice"]
            assert not [r for r in await agent.list_rules() if r["policy"] == "pair.approve"]
