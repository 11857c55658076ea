"""The escalation page reads first as a question for a person, not a record for a developer."""

from __future__ import annotations

import re

import pytest

from tests.web.support import api
from tests.web.test_escalations import create, signed_in

SELECT = {"type": "select", "name": "reasonCode", "label": "Reason", "options": [{"value": "damaged", "label": "Damaged in transit"}]}


@pytest.fixture(scope="module")
def timed(world) -> str:
    world.server.cli("policy", "set", "refunds.timed", "--reviewer", "group:finance", "--sla", "4h", "--default-choice", "deny")
    return "refunds.timed"


@pytest.fixture(scope="module")
def alice(world):
    return signed_in(world, world.alice)


def test_the_question_and_evidence_come_before_the_record(world, alice):
    esc = create(world, question="Refund 1,200 EUR to Dana?")
    text = alice.get(f"/app/escalations/{esc['id']}").text
    assert text.index("Refund 1,200 EUR to Dana?") < text.index("customer since 2019") < text.index('class="facts"')


def test_what_happens_on_timeout_is_named_with_the_default_label(world, alice, timed):
    esc = create(world, policy=timed)
    text = alice.get(f"/app/escalations/{esc['id']}").text
    assert re.search(r"If nobody answers: in (3 h 5\d min|4 h), Deny applies", text), text


def test_choices_are_offered_by_label_without_their_ids(world, alice):
    esc = create(world, choices=[{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}])
    form = alice.get(f"/app/escalations/{esc['id']}").text.split('id="decide-form"', 1)[1].split("</form>", 1)[0]
    assert "Deny" in form and "<code>deny</code>" not in form


def test_a_decision_reads_as_labels_and_who_decided(world, alice):
    esc = create(world, responseFields=[SELECT])
    status, _ = api(world.url, "POST", f"/escalations/{esc['id']}/decide", world.alice, {"choice": "deny", "response": {"reasonCode": "damaged"}})
    assert status == 200
    text = alice.get(f"/app/escalations/{esc['id']}").text
    resolution = text.split('id="resolution"', 1)[1].split("</p>", 1)[0]
    assert "<strong>Deny</strong>" in resolution and "decided by alice" in resolution
    assert "Reason: Damaged in transit" in resolution and "reasonCode" not in resolution


def test_a_resolved_inbox_row_says_what_was_decided_and_by_whom(world, alice):
    esc = create(world, question="Which row is this?")
    assert api(world.url, "POST", f"/escalations/{esc['id']}/decide", world.alice, {"choice": "approve"})[0] == 200
    inbox = alice.get("/app/?status=resolved").text
    row = inbox.split(f'data-id="{esc["id"]}"', 1)[1].split("</li>", 1)[0]
    assert "Approve — by alice" in row


def test_evidence_keeps_its_line_breaks_and_its_links_are_clickable_and_safe(world, alice):
    evidence = "line one\nline two: see https://shop.example/orders/981. <script>alert(1)</script> javascript:alert(2)"
    esc = create(world, evidence=[evidence])
    text = alice.get(f"/app/escalations/{esc['id']}").text
    item = text.split('<ul class="evidence">', 1)[1].split("</ul>", 1)[0]
    assert "line one\nline two" in item  # kept as written; the stylesheet shows the break
    assert '<a href="https://shop.example/orders/981" rel="noopener noreferrer nofollow" target="_blank">' in item
    assert "<script>" not in item and "&lt;script&gt;" in item and 'href="javascript' not in item
    assert "white-space: pre-wrap" in alice.get("/app/static/app.css").text


def test_times_carry_their_utc_value_for_the_browser_to_localise(world, alice):
    esc = create(world)
    text = alice.get(f"/app/escalations/{esc['id']}").text
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" title="[^"]+ UTC">', text)
