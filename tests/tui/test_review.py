"""Driving the reviewer TUI with Pilot against a real server, at 80x24."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from textual.widgets import Input, RadioSet, Select

from escalated.agent.receiver import make_receiver_app, start_receiver
from escalated.tui.components.escalation_table import EscalationTable
from escalated.tui.components.status_line import StatusLine
from escalated.tui.screens.decide import DecideScreen
from escalated.tui.screens.detail import DetailScreen
from escalated.tui.screens.help import HelpScreen
from escalated.tui.screens.inbox import InboxScreen
from tests.support.server import start_server
from tests.tui.conftest import REFUND_FIELDS, Setup, create, server_state, wait_until

SIZE = (80, 24)


def rows(app) -> list[str]:
    return [key.value for key in app.screen.query_one(EscalationTable).rows]


def status_text(app) -> str:
    return str(app.screen.query_one(StatusLine).content)


async def pick_first_choice(pilot) -> None:
    pilot.app.screen.query_one(RadioSet).focus()
    await pilot.press("enter")


async def test_inbox_lists_only_the_escalations_routed_to_the_reviewer(setup):
    async with setup.agent() as agent:
        mine = await create(agent, label="Order #1")
        await create(agent, policy="ops.other", label="Not mine")
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app), what="the first load")
            assert rows(app) == [mine["id"]]
            table = app.screen.query_one(EscalationTable)
            assert "Order #1" in str(table.get_row(mine["id"]))


async def test_a_new_escalation_arrives_through_the_event_stream(setup):
    async with setup.agent() as agent:
        # A poll an hour away: only the stream can bring the row in time.
        app, client = setup.app(poll_interval_s=3600)
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stream_connected, what="the event stream")
            created = await create(agent, label="Order #2")
            await wait_until(pilot, lambda: rows(app) == [created["id"]], timeout_s=1.5, what="the new row")


async def test_without_the_stream_the_poll_brings_new_escalations(setup):
    async with setup.agent() as agent:
        app, client = setup.app(stream=False, poll_interval_s=1.0)
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: "visible to you" in status_text(app), what="the first load")
            created = await create(agent, label="Order #3")
            await wait_until(pilot, lambda: rows(app) == [created["id"]], timeout_s=2.5, what="the new row")


async def test_acknowledge_is_recorded_on_the_server(setup):
    async with setup.agent() as agent:
        escalation = await create(agent)
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("a")
            after = await server_state(agent, escalation["id"], lambda e: e["acknowledgedBy"])
            assert (after["status"], after["acknowledgedBy"]) == ("acknowledged", "alice")
            await wait_until(pilot, lambda: "Acknowledged" in status_text(app))


async def test_decide_with_response_fields_resolves_on_the_server(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, response_fields=REFUND_FIELDS)
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
            await pick_first_choice(pilot)
            app.screen.query_one("#field-0", Input).focus()
            await pilot.press(*"7.5")
            app.screen.query_one("#field-1", Select).value = "damaged"
            reason = app.screen.query_one("#reason", Input)
            reason.value = "documented"
            reason.focus()
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen), what="the form to close")
            after = await server_state(agent, escalation["id"], lambda e: e["status"] == "resolved")
            resolution = after["resolution"]
            assert (resolution["choice"], resolution["answeredBy"], resolution["reason"]) == (
                "approve", "alice", "documented",
            )
            assert resolution["response"] == {"amount": 7.5, "reasonCode": "damaged"}
            await wait_until(pilot, lambda: rows(app) == [], what="the decided row to leave the open view")


async def test_an_invalid_number_is_refused_in_the_form_and_nothing_is_sent(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, response_fields=REFUND_FIELDS)
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
            await pick_first_choice(pilot)
            app.screen.query_one("#field-0", Input).focus()
            await pilot.press(*"7.2")  # off the 0.5 step grid
            app.screen.query_one("#field-1", Select).value = "late"
            await pilot.press("ctrl+s")
            await pilot.pause()
            error = str(app.screen.query_one("#error-field-0").content)
            assert "multiple of 0.5" in error
            assert isinstance(app.screen, DecideScreen)
        after = await agent.get_escalation(escalation["id"])
        assert after["status"] == "open"
        assert [h["event"] for h in after["history"]] == ["created"]


async def test_a_decision_made_elsewhere_first_is_explained_without_a_crash(setup):
    async with setup.agent() as agent:
        escalation = await create(agent)
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
            await agent.decide(escalation["id"], choice="deny", reason="someone else was faster")
            await pick_first_choice(pilot)
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen), what="the form to close")
            await wait_until(pilot, lambda: "Too late" in status_text(app), what="the 409 explanation")
            assert "already decided by key:" in status_text(app)
            assert "(deny)" in status_text(app)
            await wait_until(pilot, lambda: rows(app) == [], what="the refreshed view")


async def test_cancel_with_a_reason_is_recorded_on_the_server(setup):
    async with setup.agent() as agent:
        escalation = await create(agent)
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("c")
            await pilot.pause()
            app.screen.query_one("#reason", Input).value = "duplicate request"
            await pilot.press("enter")
            after = await server_state(agent, escalation["id"], lambda e: e["status"] == "cancelled")
            assert after["cancellation"]["reason"] == "duplicate request"
            assert after["cancellation"]["cancelledBy"] == "alice"


async def test_a_rejected_token_is_shown_plainly(setup):
    app, client = setup.app(token="ain_user_" + "x" * 40)
    async with client, app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "401" in status_text(app), what="the 401 message")
        assert "rejected the token" in status_text(app)


async def test_a_lost_server_is_shown_and_the_app_keeps_running(own_setup):
    setup = own_setup
    async with setup.agent() as agent:
        await create(agent)
    app, client = setup.app()
    async with client, app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: rows(app))
        setup.server.kill()  # as abrupt as a crash or a pulled cable
        await wait_until(pilot, lambda: "Connection lost" in status_text(app), what="the lost connection")
        await pilot.press("a")  # acting while down is explained too, not a crash
        await pilot.pause()
        assert app.is_running and len(rows(app)) == 1


async def test_detail_shows_the_question_evidence_and_history(setup):
    async with setup.agent() as agent:
        await create(agent, label="Order #7")
    app, client = setup.app()
    async with client, app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: rows(app))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
        text = "".join(str(app.screen.query_one(f"#{part}").content) for part in ("summary", "callback", "details"))
        for expected in ("Refund Order #7?", "customer since 2019", "Approve", "Deny applies", "created by key:", "Callback"):
            assert expected in text
        await pilot.press("escape")
        assert isinstance(app.screen, InboxScreen)


async def test_question_mark_opens_the_help(setup):
    app, client = setup.app()
    async with client, app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, InboxScreen)


async def test_detail_shows_the_callback_delivery_status(setup):
    received = []
    receiver = await start_receiver(make_receiver_app(received.append, secret="s3cret-for-tests"))
    async with receiver, setup.agent() as agent:
        resume = {"mode": "webhook", "url": f"{receiver.url}/resume", "secret": "s3cret-for-tests"}
        escalation = await create(agent, label="Order #8", resume=resume)
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app))
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
            callback = app.screen.query_one("#callback")
            await wait_until(pilot, lambda: "not sent yet" in str(callback.content), what="the pending callback")
            await agent.decide(escalation["id"], choice="approve")
            await wait_until(pilot, lambda: "delivered" in str(callback.content), what="the delivered callback")
            assert "escalation.decided, 1 attempt(s), last 200" in str(callback.content)
            assert "s3cret" not in str(callback.content)
    assert [c.choice for c in received] == ["approve"]


async def press_until(pilot, key: str, predicate, *, most: int = 10) -> None:
    """Cycle a filter with its key until ``predicate()``; the server is shared, so
    other tests' policies may come first in the cycle."""
    for _ in range(most):
        if predicate():
            return
        await pilot.press(key)
    assert predicate()


async def test_status_and_policy_filters_narrow_the_inbox(setup):
    async with setup.agent() as agent:
        large = await create(agent, label="Large")
        small = await create(agent, policy="refunds.small", label="Small")
        decided = await create(agent, label="Decided")
        await agent.decide(decided["id"], choice="approve")
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(rows(app)) == 2, what="the open view")
            await press_until(pilot, "p", lambda: app.screen.policy == "refunds.large")
            assert rows(app) == [large["id"]]
            await press_until(pilot, "p", lambda: app.screen.policy == "refunds.small")
            assert rows(app) == [small["id"]]
            await press_until(pilot, "p", lambda: app.screen.policy is None)
            await pilot.press("f")  # the resolved view
            assert decided["id"] in rows(app) and large["id"] not in rows(app)


async def test_a_breached_escalation_leaves_the_open_view(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, policy="quick.breach", label="Hurry")
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: rows(app) == [escalation["id"]], what="the open row")
            await wait_until(pilot, lambda: rows(app) == [], timeout_s=6, what="the breach")
            await pilot.press("f")  # the resolved view (earlier tests' decisions may be there too)
            assert escalation["id"] in rows(app)
            sla = app.screen.query_one(EscalationTable).get_cell(escalation["id"], "sla")
            assert str(sla) == "timeout"


async def test_q_in_the_decide_form_does_not_quit(setup):
    async with setup.agent() as agent:
        await create(agent)
    app, client = setup.app()
    async with client, app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: rows(app))
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
        await pilot.press("q")  # focus is on the choices, not a text field
        assert app.is_running and isinstance(app.screen, DecideScreen)
        await pilot.press("escape", "q")
        await wait_until(pilot, lambda: not app.is_running, what="q to quit from the inbox")


async def test_a_failed_callback_can_be_retried_from_the_detail(tmp_path):
    server = start_server(tmp_path, "--retry-schedule", "200ms", "--retry-for", "1s")
    setup = Setup(server=server, alice_token=server.cli("users", "add", "alice"))
    server.cli("policy", "set", "refunds.large", "--reviewer", "alice")
    receiver_down = True
    received = []

    def handle(callback) -> None:
        if receiver_down:
            raise RuntimeError("the agent is down")  # the receiver answers 500
        received.append(callback)

    receiver = await start_receiver(make_receiver_app(handle, secret="another-test-secret"))
    try:
        async with receiver, setup.agent() as agent:
            resume = {"mode": "webhook", "url": f"{receiver.url}/resume", "secret": "another-test-secret"}
            escalation = await create(agent, label="Order #9", resume=resume)
            await agent.decide(escalation["id"], choice="deny")
            app, client = setup.app()
            async with client, app.run_test(size=SIZE) as pilot:
                await pilot.press("f")  # decided: it is in the resolved view
                await wait_until(pilot, lambda: rows(app) == [escalation["id"]])
                await pilot.press("enter")
                await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
                callback = app.screen.query_one("#callback")
                await wait_until(pilot, lambda: "failed" in str(callback.content), timeout_s=8, what="give-up")
                receiver_down = False
                await pilot.press("t")
                await wait_until(pilot, lambda: "delivered" in str(callback.content), timeout_s=8, what="redelivery")
        assert [c.choice for c in received] == ["deny"]
    finally:
        server.stop()


async def test_the_banner_stays_on_the_inbox_while_the_app_runs(setup):
    link = "http://127.0.0.1:1/app/login/link#" + "x" * 60  # longer than the terminal is wide
    app, client = setup.app(banner=f"Web app: {link}")
    async with client, app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.screen.query("#banner"), what="the banner")
        shown = str(app.screen.query_one("#banner").content)
        assert link in shown  # whole, to be copied: it wraps rather than being cut


async def test_a_decision_shows_in_the_inbox_row_by_label_and_reviewer(setup):
    async with setup.agent() as agent:
        escalation = await create(agent, label="Order #8")
        await agent.decide(escalation["id"], choice="deny", reason="no")
        app, client = setup.app()
        async with client, app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: escalation["id"] in app.escalations, what="the first load")
            while app.screen.view != "resolved":
                await pilot.press("f")  # the status views in turn, as a reviewer cycles them
            await wait_until(pilot, lambda: escalation["id"] in rows(app), what="the resolved view")
            row = str(app.screen.query_one(EscalationTable).get_row(escalation["id"]))
            assert "→ Deny (key:" in row


async def test_a_crash_report_shows_the_error_but_never_a_frames_variables(shared):
    """Textual prints an unhandled error with each frame's variables; a frame
    inside a request holds the token. A bug (here raised on purpose, as any
    future one would be) is reported with its lines and without them."""
    app, client = shared.app()
    app.error_console = Console(file=io.StringIO(), width=200)
    token = shared.alice_token

    def a_bug_inside_a_request() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        raise RuntimeError(f"a bug with {len(headers)} header")

    try:
        with pytest.raises(RuntimeError):
            async with app.run_test() as pilot:
                app.call_later(a_bug_inside_a_request)
                await pilot.pause()
    finally:
        await client.close()
    report = app.error_console.file.getvalue()
    assert "RuntimeError" in report and "a bug with 1 header" in report and "a_bug_inside_a_request" in report
    assert token not in report and token[:20] not in report
