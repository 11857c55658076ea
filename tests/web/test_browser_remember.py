"""The decide form's "remember for matching escalations" and the claim button
in a real browser (CONTRACT §15): what a reviewer clicks makes the rule, and
the next matching escalation is decided by it."""

from __future__ import annotations

import pytest

from tests.support.api import unique
from tests.web.support import api
from tests.web.test_browser import browser, chromium, sign_in_by_link, status_text, wait_for  # noqa: F401  (fixtures)
from tests.web.test_escalations import create

pytestmark = pytest.mark.only_on("sqlite", reason="a browser adds nothing backend-specific; the page tests run on both")


def test_claim_then_decide_and_remember_from_the_browser(browser, world):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    agent = unique("browser-agent")
    esc = create(world, agentId=agent, question="Refund the usual amount?")
    sign_in_by_link(browser, world)
    browser.get(f"{world.url}/app/escalations/{esc['id']}")
    browser.find_element(By.CSS_SELECTOR, "#claim-form button").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "assignee").text == "alice", "the claim did not show")
    browser.find_element(By.CSS_SELECTOR, "input[name=choice][value=approve]").click()
    browser.find_element(By.ID, "reason").send_keys("usual customer")
    browser.find_element(By.ID, "remember-box").click()
    Select(browser.find_element(By.ID, "remember-match")).select_by_value("agent-subject")
    Select(browser.find_element(By.ID, "remember-for")).select_by_value("1h")
    browser.find_element(By.CSS_SELECTOR, "#decide-form button[type=submit]").click()
    wait_for(browser, lambda d: status_text(d) == "resolved", "the decision did not show")

    [rule] = [r for r in api(world.url, "GET", "/rules", world.key)[1]["data"] if r["match"].get("agentId") == agent]
    assert rule["match"] == {"agentId": agent, "subjectType": "order", "subjectId": "o-981"}
    assert (rule["createdBy"], rule["reason"], rule["status"]) == ("alice", "usual customer", "active")
    following = create(world, agentId=agent)
    browser.get(f"{world.url}/app/escalations/{following['id']}")
    wait_for(browser, lambda d: status_text(d) == "resolved", "the rule did not decide the next escalation")
    assert "remembered decision of alice" in browser.find_element(By.ID, "resolution").text


def test_remember_on_a_quorum_choice_records_the_approval_and_says_it_is_not_remembered(browser, world):  # noqa: F811
    from selenium.webdriver.common.by import By

    world.server.cli("policy", "set", "pair.browser", "--quorum", "2", "--quorum-choice", "approve")
    esc = create(world, policy="pair.browser", question="Approve the large refund?")
    sign_in_by_link(browser, world)
    browser.get(f"{world.url}/app/escalations/{esc['id']}")
    browser.find_element(By.CSS_SELECTOR, "input[name=choice][value=approve]").click()
    browser.find_element(By.ID, "remember-box").click()
    browser.find_element(By.CSS_SELECTOR, "#decide-form button[type=submit]").click()
    wait_for(
        browser,
        lambda d: "Your decision is recorded, but not remembered" in d.find_element(By.ID, "remember").text,
        "the page did not say the decision was not remembered",
    )
    body = api(world.url, "GET", f"/escalations/{esc['id']}", world.key)[1]
    assert [a["by"] for a in body["approvals"]] == ["alice"] and body["status"] != "resolved"
