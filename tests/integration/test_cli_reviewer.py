"""CONTRACT §15: the reviewer CLI (``escalated escalations …``) over HTTP
against a real server, on both backends, through click's CliRunner."""

from __future__ import annotations

import contextlib

import json

import pytest
from click.testing import CliRunner

from escalated.cli import main
from escalated.core.admin import PolicyRequest
from tests.support import setup
from tests.support.api import unique

AMOUNT = [{"type": "number", "name": "amount", "label": "Amount", "min": 0, "step": 0.5}]


@pytest.fixture
def cli(live):
    """``cli(token, *args)``: the command's result, talking to the live server."""

    def run(token: str, *args: str, env: dict | None = None):
        environment = {"ESCALATED_URL": live.url, "ESCALATED_TOKEN": token, "ESCALATED_API_KEY": None, **(env or {})}
        return CliRunner().invoke(main, ["escalations", *args], env=environment)

    return run


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def test_list_json_is_the_servers_page_and_mine_is_the_callers_assignments(live, cli, admin_key):
    policy = live.policy()
    name = unique("cli-reviewer")
    token = live.user(name)
    mine, other = live.create(admin_key, policy=policy), live.create(admin_key, policy=policy)
    ok(cli(token, "claim", mine["id"]))
    listed = json.loads(ok(cli(token, "list", "--policy", policy, "--json")))
    assert [e["id"] for e in listed] == [other["id"], mine["id"]]
    assert [e["id"] for e in json.loads(ok(cli(token, "list", "--mine", "--json")))] == [mine["id"]]
    text = ok(cli(token, "list", "--policy", policy, "--status", "acknowledged"))
    assert mine["id"] in text and name in text and other["id"] not in text


def test_show_reads_question_first_and_lists_history(live, cli, admin_key):
    esc = live.create(admin_key, question="Refund 80 EUR?", evidence=["line one\nline two"])
    text = ok(cli(admin_key, "show", esc["id"]))
    assert text.startswith("Refund 80 EUR?\n")
    assert "  - line one\n    line two" in text and "Approve (approve)" in text
    assert "Assignee:  nobody" in text and "created" in text
    assert json.loads(ok(cli(admin_key, "show", esc["id"], "--json")))["id"] == esc["id"]


def test_ack_claim_decide_with_a_field_and_the_outcome_in_words(live, cli, admin_key):
    name = unique("decider")
    token = live.user(name)
    esc = live.create(admin_key, responseFields=AMOUNT)
    assert "acknowledged" in ok(cli(token, "ack", esc["id"]))
    assert f"assignee {name}" in ok(cli(token, "claim", esc["id"]))
    out = ok(cli(token, "decide", esc["id"], "approve", "--reason", "fine", "--field", "amount=12.5"))
    assert out.strip() == f"{esc['id']}: resolved, approve by {name}: fine, assignee {name}"
    resolution = live.api.get(f"/escalations/{esc['id']}", token=admin_key).json()["resolution"]
    assert resolution["response"] == {"amount": 12.5} and resolution["reason"] == "fine"


def test_cancel_with_json(live, cli, admin_key):
    esc = live.create(admin_key)
    body = json.loads(ok(cli(admin_key, "cancel", esc["id"], "--reason", "not needed", "--json")))
    assert body["status"] == "cancelled" and body["cancellation"]["reason"] == "not needed"


def test_a_refusal_is_the_problem_in_words_and_exit_1(live, cli, admin_key):
    esc = live.create(admin_key)
    ok(cli(admin_key, "decide", esc["id"], "deny"))
    again = cli(admin_key, "decide", esc["id"], "approve")
    assert again.exit_code == 1
    assert f"refused: escalation {esc['id']} is resolved [409 invalid_state]" in again.output
    bad = cli(admin_key, "decide", live.create(admin_key)["id"], "maybe")
    assert bad.exit_code == 1 and "choice: must be one of: approve, deny" in bad.output
    unknown = cli(admin_key, "show", "esc_nothing")
    assert unknown.exit_code == 1 and "[404 not_found] (unknown, or not routed to you)" in unknown.output


def test_a_bad_token_and_an_unreachable_server_say_so(live, cli):
    refused = cli("ain_user_" + "x" * 40, "list")
    assert refused.exit_code == 1 and "[401 unauthenticated] (check --token" in refused.output
    down = cli("t", "list", env={"ESCALATED_URL": "http://127.0.0.1:9"})
    assert down.exit_code == 1 and "cannot reach the escalated server at http://127.0.0.1:9" in down.output


def test_an_api_key_in_escalated_api_key_is_used_and_cannot_claim(live, cli, admin_key):
    esc = live.create(admin_key)
    result = cli(None, "claim", esc["id"], env={"ESCALATED_TOKEN": None, "ESCALATED_API_KEY": admin_key})
    assert result.exit_code == 1 and "[403 user_token_required]" in result.output


def test_a_field_that_is_not_name_value_is_a_usage_error(live, cli, admin_key):
    esc = live.create(admin_key, responseFields=AMOUNT)
    for field in ("amount", "amount=lots", "amount=nan", "amount=1e999"):  # json.dumps wrote NaN/Infinity: not JSON
        result = cli(admin_key, "decide", esc["id"], "approve", "--field", field)
        assert result.exit_code == 2 and "--field" in result.output, result.output


def test_a_field_given_twice_is_a_usage_error_not_the_last_one_silently(live, cli, admin_key):
    esc = live.create(admin_key, responseFields=AMOUNT)
    result = cli(admin_key, "decide", esc["id"], "approve", "--field", "amount=1", "--field", "amount=100")
    assert result.exit_code == 2 and "amount is given twice" in result.output
    assert live.api.get(f"/escalations/{esc['id']}", token=admin_key).json()["status"] == "open"


def test_show_lists_the_approvals_of_a_quorum(live, cli, admin_key):
    key = f"{unique('pair')}.cli"
    request = PolicyRequest(key=key, quorum="2", quorum_choices=("approve",), allow_unknown_reviewers=True)
    live._run(lambda: setup.set_policy(live.app, request))
    esc = live.create(admin_key, policy=key)
    name = unique("approver")
    assert ok(cli(live.user(name), "decide", esc["id"], "approve")).strip() == f"{esc['id']}: open"  # one approval of two
    assert f"Approvals: {name} (approve)" in ok(cli(admin_key, "show", esc["id"]))


def test_a_url_where_no_escalated_server_answers_is_said_so_not_as_a_refusal():
    """An SMTP banner on the port: the client's not_escalated, said as such (it was
    'refused: ... [200 not_escalated]', as if a server had refused something)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def banner() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                with conn:
                    conn.sendall(b"220 mail.example ESMTP ready\r\n")

    threading.Thread(target=banner, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        env = {"ESCALATED_URL": url, "ESCALATED_TOKEN": "ain_live_" + "k" * 38, "ESCALATED_API_KEY": None}
        result = CliRunner().invoke(main, ["escalations", "list"], env=env)
    finally:
        listener.close()
    assert result.exit_code == 1
    assert "the answer is not HTTP this client can read (Bad status line): is that URL the escalated server?" in result.output
    assert "refused" not in result.output and "[200" not in result.output
