"""Slack's signature, payload and text rules (escalated/domain/slack.py) and the
messages built from an escalation (escalated/engine/slackmessages.py).

The signatures here come from tests/support/slack.py, written from Slack's
documentation, not from the code under test.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import orjson
import pytest

from escalated.core.notifications import notification_deliveries
from escalated.core.slackdecide import Decided, Refused, TooLate
from escalated.domain.convert import content_to_json
from escalated.domain.models import Cancellation, Choice, Content, Escalation, NumberField, Resolution, SelectField, SelectOption, Subject
from escalated.engine import slackmessages
from escalated.engine.slackmessages import Shown
from escalated.domain.slack import check_signature, escape, parse_interaction, unescape
from escalated.errors import InvalidJson, Unauthenticated, ValidationFailed
from tests.support.slack import sign

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
NOW_S = 1_700_000_000


def _check(body: bytes, *, timestamp: str | None = str(NOW_S), sent: str | None = None, now_s: float = NOW_S) -> None:
    if sent is None and timestamp is not None:
        sent = sign(SECRET, timestamp, body)
    check_signature(SECRET, timestamp=timestamp, sent=sent, body=body, now_s=now_s)


def test_a_request_signed_as_slack_documents_passes():
    _check(b"payload=%7B%7D")


def test_slacks_documented_example_signature_passes():
    # The worked example of Slack's "Verifying requests from Slack" page.
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
        b"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
        b"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
        b"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    check_signature(
        SECRET,
        timestamp="1531420618",
        sent="v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
        body=body,
        now_s=1531420618,
    )


def test_a_changed_body_is_refused():
    signed = sign(SECRET, str(NOW_S), b"payload=a")
    with pytest.raises(Unauthenticated, match="does not match"):
        _check(b"payload=b", sent=signed)


def test_another_secret_is_refused():
    with pytest.raises(Unauthenticated):
        _check(b"x", sent=sign("another-secret", str(NOW_S), b"x"))


@pytest.mark.parametrize("timestamp, sent", [(None, "v0=00"), (str(NOW_S), None), ("", ""), (None, None)])
def test_missing_headers_are_refused(timestamp, sent):
    with pytest.raises(Unauthenticated, match="missing"):
        check_signature(SECRET, timestamp=timestamp, sent=sent, body=b"x", now_s=NOW_S)


@pytest.mark.parametrize("skew_s", [301, -301, 86_400])
def test_a_timestamp_over_five_minutes_away_is_refused_even_when_signed(skew_s):
    with pytest.raises(Unauthenticated, match="5 minutes"):
        _check(b"x", timestamp=str(NOW_S - skew_s), now_s=NOW_S)


@pytest.mark.parametrize("skew_s", [300, -300, 0])
def test_a_timestamp_within_five_minutes_passes(skew_s):
    _check(b"x", timestamp=str(NOW_S - skew_s), now_s=NOW_S)


@pytest.mark.parametrize("timestamp", ["1.5e9", "-1", "１７００００００００", "99999999999999999999"])
def test_a_timestamp_that_is_not_unix_seconds_is_refused(timestamp):
    with pytest.raises(Unauthenticated):
        _check(b"x", timestamp=timestamp, sent="v0=00")


def test_a_non_ascii_signature_is_refused_not_an_error():
    with pytest.raises(Unauthenticated):
        _check(b"x", sent="v0=é")


def _form(payload) -> bytes:
    return urlencode({"payload": payload if isinstance(payload, str) else json.dumps(payload)}).encode()


def _press(value: str, **overrides) -> dict:
    payload = {
        "type": "block_actions",
        "user": {"id": "U0ALICE"},
        "response_url": "http://127.0.0.1:9/r",
        "actions": [{"action_id": "escalated.decide.approve", "value": value}],
    }
    payload.update(overrides)
    return payload


def test_a_press_of_our_button_reads_as_a_click():
    click = parse_interaction(_form(_press('{"escalation": "esc_1", "choice": "approve"}')))
    assert (click.user_id, click.escalation_id, click.choice) == ("U0ALICE", "esc_1", "approve")


def test_another_kind_of_interaction_is_ignored():
    assert parse_interaction(_form({"type": "view_submission"})) is None


def test_another_apps_action_is_ignored():
    payload = _press("x", actions=[{"action_id": "open-link", "url": "https://example.com"}])
    assert parse_interaction(_form(payload)) is None


@pytest.mark.parametrize("body", [b"", b"other=1", b"payload=1&payload=2", b"\xff\xfe", b"a&&b"])
def test_a_body_without_one_payload_is_422(body):
    with pytest.raises(ValidationFailed):
        parse_interaction(body)


@pytest.mark.parametrize("payload", ["{", "[1]", "null", "\"text\""])
def test_a_payload_that_is_not_a_json_object_is_400(payload):
    with pytest.raises(InvalidJson):
        parse_interaction(_form(payload))


@pytest.mark.parametrize(
    "overrides",
    [{"actions": []}, {"actions": "x"}, {"user": {}}, {"user": "U1"}, {"response_url": None}, {"response_url": 3}],
)
def test_a_press_missing_its_parts_is_422(overrides):
    with pytest.raises(ValidationFailed):
        parse_interaction(_form(_press('{"escalation": "e", "choice": "c"}', **overrides)))


@pytest.mark.parametrize("value", [None, "", "approve", "[]", '{"escalation": "e"}', '{"escalation": 1, "choice": "c"}'])
def test_a_button_value_not_of_our_making_is_422(value):
    with pytest.raises(ValidationFailed):
        parse_interaction(_form(_press(value)))


def test_escape_makes_slack_control_sequences_inert():
    assert escape("<!channel> & <http://evil|bank>") == "&lt;!channel&gt; &amp; &lt;http://evil|bank&gt;"


@pytest.mark.parametrize("text", ["<!channel> & <http://evil|bank>", "&lt; stays &lt;", "&amp;gt;", "plain"])
def test_unescape_gives_back_the_text_escaped(text):
    """The desktop pop-up shows a webhook body's Slack-escaped ``text`` as written."""
    assert unescape(escape(text)) == text


def _escalation(**overrides) -> Escalation:
    content = Content(
        subject=Subject(type="order", id="o-1", label="Order <#981> & co"),
        question="Refund <!here> 1,200 EUR?",
        evidence=("customer since 2019", "<@U999> said so"),
        choices=(Choice(id="approve", label="Approve"), Choice(id="deny", label="Deny")),
    )
    base = dict(
        id="esc_1", workspace_id="ws", status="open", policy="refunds.large", agent_id="a", run_id="r",
        content=content, created_ms=NOW_S * 1000, created_by="key:k", deadline_ms=(NOW_S + 600) * 1000,
    )  # fmt: skip
    base.update(overrides)
    return Escalation(**base)


def _shown(**overrides) -> Shown:
    return Shown.of(_escalation(**overrides))


def _texts(message: dict) -> str:
    return json.dumps(message)


def test_a_notification_with_buttons_has_one_per_choice_carrying_the_escalation():
    message = slackmessages.notification(_shown(), buttons=True, base_url="https://esc.example")
    [actions] = [b for b in message["blocks"] if b["type"] == "actions"]
    values = [json.loads(e["value"]) for e in actions["elements"]]
    assert values == [{"escalation": "esc_1", "choice": "approve"}, {"escalation": "esc_1", "choice": "deny"}]
    assert len({e["action_id"] for e in actions["elements"]}) == 2


def test_user_text_is_escaped_in_every_mrkdwn_field():
    text = _texts(slackmessages.notification(_shown(), buttons=True, base_url=None))
    for raw in ("<!here>", "<#981>", "<@U999>", "& co"):
        assert raw not in text
    assert "Refund &lt;!here&gt; 1,200 EUR?" in text and "&lt;@U999&gt; said so" in text


def test_the_deadline_is_shown_as_a_slack_date_with_an_rfc3339_fallback():
    text = _texts(slackmessages.notification(_shown(), buttons=True, base_url=None))
    assert f"<!date^{NOW_S + 600}^" in text and "2023-11-14T22:23:20.000Z" in text


def test_without_buttons_the_message_links_to_the_web_page():
    message = slackmessages.notification(_shown(), buttons=False, base_url="https://esc.example")
    assert not [b for b in message["blocks"] if b["type"] == "actions"]
    assert "<https://esc.example/app/escalations/esc_1|" in _texts(message)


def test_a_public_url_ending_in_a_slash_links_to_the_page_without_a_double_slash():
    message = slackmessages.notification(_shown(), buttons=False, base_url="https://esc.example/")
    assert "<https://esc.example/app/escalations/esc_1|" in _texts(message)


def test_response_fields_get_a_link_not_buttons():
    esc = _escalation()
    esc = _escalation(content=Content(
        subject=esc.content.subject, question="How much?", evidence=(), choices=esc.content.choices,
        response_fields=(NumberField(name="amount", label="Amount"),),
    ))  # fmt: skip
    message = slackmessages.notification(Shown.of(esc), buttons=True, base_url="https://esc.example")
    assert not [b for b in message["blocks"] if b["type"] == "actions"]
    assert "needs some input" in _texts(message)


def test_long_text_is_cut_to_slacks_limits_without_splitting_an_entity():
    esc = _escalation()
    long = _escalation(content=Content(
        subject=esc.content.subject, question="<" * 5000, evidence=("&" * 5000,) * 50,
        choices=(Choice(id="a", label="L" * 200),),
    ))  # fmt: skip
    message = slackmessages.notification(Shown.of(long), buttons=True, base_url=None)
    for block in message["blocks"]:
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= slackmessages.MAX_SECTION
            assert not block["text"]["text"].rstrip("…").endswith(("&", "&l", "&lt", "&am", "&amp"))
        if block["type"] == "actions":
            assert len(block["elements"][0]["text"]["text"]) <= slackmessages.MAX_BUTTON_LABEL


def test_the_decided_message_replaces_the_buttons_with_who_decided():
    esc = _escalation(
        status="resolved",
        resolution=Resolution(choice="deny", resolved_by="human", answered_by="alice <admin>", answered_at_ms=NOW_S * 1000),
    )
    message = slackmessages.decided(esc)
    assert message["replace_original"] is True
    assert not [b for b in message["blocks"] if b["type"] == "actions"]
    assert "*Deny*, decided by *alice &lt;admin&gt;*" in _texts(message)


def _queued(esc: Escalation, **settings) -> bytes:
    """The body core/notifications.py stores for a ``slack:`` target."""
    [delivery] = notification_deliveries(esc, ["slack:https://hooks.example/x"], at_ms=1, content_json=content_to_json(esc.content), **settings)
    return delivery.body


@pytest.mark.parametrize("buttons", [True, False])
@pytest.mark.parametrize("base_url", [None, "https://esc.example/"])
@pytest.mark.parametrize("lead", [None, "Reminder"])
@pytest.mark.parametrize(
    "esc",
    [
        _escalation(),
        _escalation(deadline_ms=None, default_choice=None),
        _escalation(deadline_ms=NOW_S * 1000 + 337, default_choice="deny"),
        _escalation(content=Content(
            subject=Subject(type="pr", id="7", label="PR ✓ <b>"), question="How much?", evidence=("e",) * 30,
            choices=(Choice(id="ok", label="OK"),),
            response_fields=(NumberField(name="n", label="N", min=1.0), SelectField(name="s", label="S", options=(SelectOption("a", "A"),))),
        )),
    ],
)  # fmt: skip
def test_the_sender_renders_the_stored_notification_as_the_escalation_itself_renders(esc, buttons, base_url, lead):
    """The outbox keeps the escalation as its resource; the message made from
    it is the one made from the escalation, byte for byte."""
    expected = slackmessages.notification(Shown.of(esc), buttons=buttons, base_url=base_url)
    if lead is not None:
        expected["text"] = f"{lead}: {expected['text']}"
    stored = _queued(esc, slack_buttons=buttons, base_url=base_url, lead=lead)
    assert b"blocks" not in stored  # the core stores the escalation, not Slack's markup
    assert slackmessages.notification_body(stored) == orjson.dumps(expected)


def test_a_notification_queued_as_block_kit_by_an_earlier_version_is_posted_as_it_is():
    queued = b'{"text":"Order: Refund?","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Order* p Refund?"}}]}'
    assert slackmessages.notification_body(queued) == queued


@pytest.mark.parametrize("stored", [b"not json", b'{"slack": {"buttons": true}}', b'{"slack": {}, "escalation": {"id": "e"}}'])
def test_a_stored_body_that_is_neither_is_a_value_error(stored):
    with pytest.raises(ValueError):
        slackmessages.notification_body(stored)


def test_what_a_click_came_to_becomes_its_reply():
    resolved = _escalation(
        status="resolved", resolution=Resolution(choice="deny", resolved_by="human", answered_by="bob", answered_at_ms=NOW_S * 1000)
    )
    assert slackmessages.click_reply(Decided(resolved)) == slackmessages.decided(resolved)
    too_late = slackmessages.click_reply(TooLate(resolved))
    assert too_late["response_type"] == "ephemeral" and too_late["text"].startswith("Too late, nothing was changed: :white_check_mark: *Deny*")
    refused = slackmessages.click_reply(Refused("link it with: escalated users add NAME --slack-id <!channel>"))
    assert refused["response_type"] == "ephemeral" and refused["replace_original"] is False
    assert refused["text"] == "link it with: escalated users add NAME --slack-id &lt;!channel&gt;"
    cancelled = _escalation(status="cancelled", cancellation=Cancellation(reason=None, cancelled_by="key:k", cancelled_at_ms=NOW_S * 1000))
    assert ":no_entry_sign: Cancelled by *key:k*" in slackmessages.click_reply(TooLate(cancelled))["text"]
