"""The inbox and escalation pages through a real ``escalated serve``: routing, forms, errors in words."""

from __future__ import annotations

import pytest

from tests.support.api import escalation_body
from tests.web.conftest import RESUME_SECRET
from tests.web.support import WebClient, api

AMOUNT = {"type": "number", "name": "amount", "label": "Amount", "min": 0, "step": 5}
TIER = {"type": "select", "name": "tier", "label": "Tier", "options": [{"value": "gold", "label": "Gold"}, {"value": "std", "label": "Standard"}]}


def create(world, policy: str = "refunds", **overrides) -> dict:
    body = escalation_body(policy, **overrides)
    status, esc = api(world.url, "POST", "/escalations", world.key, body)
    assert status == 201, esc
    return esc


def signed_in(world, token: str) -> WebClient:
    browser = WebClient(world.url)
    assert browser.sign_in(token).status == 303
    return browser


@pytest.fixture(scope="module")
def alice(world) -> WebClient:
    return signed_in(world, world.alice)


@pytest.fixture(scope="module")
def bob(world) -> WebClient:
    return signed_in(world, world.bob)


def test_the_inbox_lists_what_is_routed_to_the_user(world, alice, bob):
    esc = create(world, question="Routed to finance only?")
    assert esc["id"] in alice.get("/app/").text
    assert esc["id"] not in bob.get("/app/").text


def test_an_escalation_not_routed_to_the_user_is_a_404_page(world, bob):
    esc = create(world)
    page = bob.get(f"/app/escalations/{esc['id']}")
    assert page.status == 404 and "not routed to you" in page.text and esc["question"] not in page.text


@pytest.mark.parametrize("action", ["acknowledge", "decide", "cancel", "redeliver"])
def test_every_form_on_an_unrouted_escalation_is_a_404(world, bob, action):
    esc = create(world)
    page = bob.submit("/app/", f"/app/escalations/{esc['id']}/{action}", {"choice": "approve"})
    assert page.status == 404
    assert api(world.url, "GET", f"/escalations/{esc['id']}", world.key)[1]["status"] == "open"


def test_the_detail_page_shows_question_evidence_choices_and_history(world, alice):
    esc = create(world, evidence=["customer since 2019"])
    page = alice.get(f"/app/escalations/{esc['id']}")
    assert page.status == 200 and f"<title>{esc['subject']['label']} · escalated</title>" in page.text
    for text in (esc["question"], "customer since 2019", "Approve", "created by key:bootstrap"):
        assert text in page.text


@pytest.mark.parametrize("action", ["acknowledge", "decide", "cancel"])
def test_a_form_without_csrf_is_refused_and_changes_nothing(world, alice, action):
    esc = create(world)
    page = alice.post(f"/app/escalations/{esc['id']}/{action}", {"choice": "approve"})
    assert page.status == 403 and "security token" in page.text
    assert api(world.url, "GET", f"/escalations/{esc['id']}", world.key)[1]["status"] == "open"


def test_a_form_with_another_sessions_csrf_is_refused(world, alice):
    other = signed_in(world, world.alice)
    esc = create(world)
    path = f"/app/escalations/{esc['id']}"
    page = alice.post(f"{path}/decide", {"csrf": other.get(path).csrf(), "choice": "approve"})
    assert page.status == 403


def test_deciding_with_response_fields_resolves_as_the_user(world, alice):
    esc = create(world, responseFields=[AMOUNT, TIER])
    path = f"/app/escalations/{esc['id']}"
    form = alice.get(path).text
    assert 'type="number"' in form and 'min="0"' in form and 'step="5"' in form and '<option value="gold"' in form
    page = alice.submit(path, f"{path}/decide", {"choice": "approve", "reason": "fine", "amount": "15", "tier": "gold"})
    assert (page.status, page.location) == (303, path)
    resolution = api(world.url, "GET", path.removeprefix("/app"), world.key)[1]["resolution"]
    assert resolution["answeredBy"] == "alice" and resolution["response"] == {"amount": 15, "tier": "gold"}
    assert resolution["reason"] == "fine"


def test_a_value_off_the_step_grid_marks_the_field(world, alice):
    esc = create(world, responseFields=[AMOUNT])
    path = f"/app/escalations/{esc['id']}"
    page = alice.submit(path, f"{path}/decide", {"choice": "approve", "amount": "7"})
    assert page.status == 422
    assert 'id="e-amount"' in page.text and "step grid" in page.text and 'aria-invalid="true"' in page.text
    assert 'value="7"' in page.text  # what was typed stays


def test_deciding_after_someone_else_says_so_in_words(world, alice):
    esc = create(world)
    path = f"/app/escalations/{esc['id']}"
    csrf = alice.get(path).csrf()
    api(world.url, "POST", f"/escalations/{esc['id']}/decide", world.key, {"choice": "deny"})
    page = alice.post(f"{path}/decide", {"csrf": csrf, "choice": "approve"})
    assert page.status == 409 and "Someone else got there first" in page.text and "already resolved" in page.text


def test_acknowledge_then_cancel_from_forms(world, alice):
    esc = create(world)
    path = f"/app/escalations/{esc['id']}"
    assert alice.submit(path, f"{path}/acknowledge", {}).status == 303
    assert alice.submit(path, f"{path}/cancel", {"reason": "duplicate"}).status == 303
    body = api(world.url, "GET", f"/escalations/{esc['id']}", world.key)[1]
    assert body["acknowledgedBy"] == "alice" and body["cancellation"]["reason"] == "duplicate"


def test_a_failed_callback_can_be_redelivered(world, alice):
    esc = create(world, resume={"mode": "webhook", "url": "http://127.0.0.1:9/resume", "secret": RESUME_SECRET})
    path = f"/app/escalations/{esc['id']}"
    api(world.url, "POST", f"/escalations/{esc['id']}/decide", world.key, {"choice": "deny"})
    page = alice.submit(path, f"{path}/redeliver", {})
    assert (page.status, page.location) == (303, path)
    assert "callback" in alice.get(path).text


def test_the_inbox_filters_by_text_and_policy_and_counts(world, alice):
    marker = create(world, question="Zebra-striped refund?")
    page = alice.get("/app/?q=zebra-striped&status=all&sort=newest")
    assert marker["id"] in page.text and "showing: <strong id=\"shown\">1</strong>" in page.text
    assert marker["id"] not in alice.get("/app/?policy=everyone").text


def test_no_secret_appears_in_pages_or_the_server_log(world, alice):
    esc = create(world, resume={"mode": "webhook", "url": "http://127.0.0.1:9/resume", "secret": RESUME_SECRET})
    link = world.server.cli("users", "login-link", "alice", "--url", world.url)
    WebClient(world.url).follow_link(link)
    pages = [alice.get(p).text for p in ("/app/", f"/app/escalations/{esc['id']}", "/app/login")]
    secrets = [RESUME_SECRET, world.alice, world.admin, world.key, link.rsplit("/", 1)[1], alice.cookies["escalated_session"]]
    for secret in secrets:
        assert not any(secret in text for text in pages)
        # The bootstrap key is printed once by design (on PostgreSQL after the migration lines).
        assert secret not in "".join(line for line in world.server.output if "Bootstrap API key" not in line)


def test_the_live_stream_carries_only_escalations_routed_to_the_user(world, bob):
    import http.client
    import json as jsonlib
    from urllib.parse import urlsplit

    parts = urlsplit(world.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
    conn.request("GET", "/app/events", headers={"Cookie": f"escalated_session={bob.cookies['escalated_session']}"})
    stream = conn.getresponse()
    try:
        assert stream.status == 200 and stream.headers["Content-Type"] == "text/event-stream"
        assert stream.readline() == b": connected\n"
        hidden = create(world, "refunds")  # finance only: not bob
        shown = create(world, "everyone")
        seen = []
        while shown["id"] not in seen:  # the stream is ordered: the hidden one would come first
            line = stream.readline().decode()
            if line.startswith("data: "):
                seen.append(jsonlib.loads(line[6:])["id"])
        assert hidden["id"] not in seen
    finally:
        conn.close()


def test_the_live_stream_ends_when_the_session_does(world):
    import http.client
    from urllib.parse import urlsplit

    viewer = signed_in(world, world.bob)
    parts = urlsplit(world.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
    conn.request("GET", "/app/events", headers={"Cookie": f"escalated_session={viewer.cookies['escalated_session']}"})
    stream = conn.getresponse()
    try:
        assert stream.readline() == b": connected\n"
        viewer.submit("/app/", "/app/logout", {})
        create(world, "everyone")  # the next event finds the session gone
        assert stream.read().strip() == b""  # the server closed the stream without sending the event
    finally:
        conn.close()
