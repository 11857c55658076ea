"""The web app in a real browser: sign in by link, decide, watch a change arrive live."""

from __future__ import annotations

import pytest

from tests.web.browser import start_chromium, stop_chromium
from tests.web.support import api
from tests.web.test_escalations import AMOUNT, TIER, create

# Chromium drives the same pages on either backend; their PostgreSQL runs are
# the page tests (test_pages, test_escalations, test_admin, test_signin).
pytestmark = pytest.mark.only_on("sqlite", reason="a browser adds nothing backend-specific; saves CI time")

WAIT_S = 15


# A reviewer whose browser is not on UTC (and half an hour off it, so minutes differ too).
TIME_ZONE = "Asia/Kolkata"


@pytest.fixture(scope="module")
def chromium():
    driver = start_chromium(time_zone=TIME_ZONE)
    yield driver
    stop_chromium(driver)


@pytest.fixture
def browser(chromium, world):
    """A signed-out browser for each test (the module shares one Chromium)."""
    chromium.get(world.url + "/app/login")
    chromium.delete_all_cookies()
    return chromium


# chromedriver's words when a page navigates between finding a node and reading it
# (a form's submit loading the next page): the same race as a stale element.
_NAVIGATED_AWAY = "does not belong to the document"


def wait_for(driver, condition, message: str):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def look(d):
        try:
            return condition(d)
        except WebDriverException as exc:
            if _NAVIGATED_AWAY in (exc.msg or ""):
                return False  # look again, on the page that replaced it
            raise

    # Live updates replace parts of the page between a look-up and a read: look again.
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, WAIT_S, poll_frequency=0.05, ignored_exceptions=ignored).until(look, message)


def sign_in_by_link(browser, world, name: str = "alice") -> None:
    link = world.server.cli("users", "login-link", name, "--url", world.url)
    browser.get(link)
    browser.find_element("css selector", "#link-form button").click()
    wait_for(browser, lambda d: d.current_url == world.url + "/app/", "the link did not land on the inbox")


def status_text(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, "status").text


def test_sign_in_with_a_login_link_and_decide_with_response_fields(browser, world):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    esc = create(world, question="Refund with an amount?", responseFields=[AMOUNT, TIER])
    sign_in_by_link(browser, world)
    browser.find_element(By.CSS_SELECTOR, f'.row[data-id="{esc["id"]}"] a').click()
    wait_for(browser, lambda d: d.title.startswith(esc["subject"]["label"]), "the escalation page did not open")
    browser.find_element(By.CSS_SELECTOR, 'input[name=choice][value=approve]').click()
    browser.find_element(By.ID, "f-amount").send_keys("25")
    Select(browser.find_element(By.ID, "f-tier")).select_by_value("gold")
    browser.find_element(By.ID, "reason").send_keys("within policy")
    browser.find_element(By.CSS_SELECTOR, "#decide-form button[type=submit]").click()
    wait_for(browser, lambda d: status_text(d) == "resolved", "the decision did not show")
    resolution = api(world.url, "GET", f"/escalations/{esc['id']}", world.key)[1]["resolution"]
    assert resolution["response"] == {"amount": 25, "tier": "gold"} and resolution["answeredBy"] == "alice"


def test_a_decision_made_elsewhere_appears_live(browser, world):
    esc = create(world)
    sign_in_by_link(browser, world)
    browser.get(f"{world.url}/app/escalations/{esc['id']}")
    wait_for(browser, lambda d: d.find_element("css selector", "body").get_attribute("data-live") == "connected", "no live stream")
    wait_for(browser, lambda d: status_text(d) == "open", "the page does not show the escalation open")
    status, _ = api(world.url, "POST", f"/escalations/{esc['id']}/decide", world.key, {"choice": "deny"})
    assert status == 200
    wait_for(browser, lambda d: status_text(d) == "resolved", "the decision made elsewhere never appeared")
    wait_for(browser, lambda d: "Deny" in d.find_element("id", "resolution").text, "the decision's choice is not shown by its label")
    assert not browser.find_elements("id", "decide-form")  # nothing left to decide


def test_a_new_escalation_appears_in_the_inbox_live(browser, world):
    sign_in_by_link(browser, world)
    wait_for(browser, lambda d: d.find_element("css selector", "body").get_attribute("data-live") == "connected", "no live stream")
    esc = create(world, question="Arrives while the inbox is open?")
    wait_for(browser, lambda d: d.find_elements("css selector", f'.row[data-id="{esc["id"]}"]'), "the new escalation never appeared")


def test_an_admin_creates_a_policy_and_an_agents_create_succeeds_with_it(browser, world):
    from selenium.webdriver.common.by import By

    from tests.support.api import escalation_body

    sign_in_by_link(browser, world, "root")
    browser.find_element(By.LINK_TEXT, "Policies").click()
    wait_for(browser, lambda d: d.title.startswith("Policies"), "the policies page did not open")
    browser.find_element(By.ID, "key").send_keys("browser.made")
    browser.find_element(By.ID, "reviewers").send_keys("alice\ngroup:finance")
    browser.find_element(By.ID, "sla").send_keys("1h")
    browser.find_element(By.ID, "default_choice").send_keys("deny")
    browser.find_element(By.CSS_SELECTOR, "#policy-form button[type=submit]").click()
    wait_for(browser, lambda d: "browser.made" in d.find_element(By.TAG_NAME, "table").text, "the policy is not listed")
    status, esc = api(world.url, "POST", "/escalations", world.key, escalation_body("browser.made"))
    assert status == 201 and esc["policy"] == "browser.made"


def test_keys_as_in_the_terminal_ui_move_and_decide(browser, world):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    esc = create(world, question="Decided from the keyboard?")
    sign_in_by_link(browser, world)
    body = browser.find_element(By.TAG_NAME, "body")
    rows = [r.get_attribute("data-id") for r in browser.find_elements(By.CSS_SELECTOR, ".row")]
    for _ in range(rows.index(esc["id"]) + 1):
        body.send_keys("j")
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".row.selected").get_attribute("data-id") == esc["id"], "j did not select")
    browser.switch_to.active_element.send_keys("d")
    wait_for(browser, lambda d: d.switch_to.active_element.get_attribute("name") == "choice", "d did not open the decide form")
    browser.switch_to.active_element.send_keys(Keys.SPACE)  # the first choice: approve
    browser.find_element(By.CSS_SELECTOR, "#decide-form button[type=submit]").click()
    wait_for(browser, lambda d: status_text(d) == "resolved", "the keyboard decision did not land")


def test_times_show_in_the_reviewers_time_zone_with_utc_on_hover(browser, world):
    import datetime
    import zoneinfo

    from selenium.webdriver.common.by import By

    esc = create(world)
    sign_in_by_link(browser, world)
    browser.get(f"{world.url}/app/escalations/{esc['id']}")
    created = datetime.datetime.fromisoformat(esc["createdAt"].replace("Z", "+00:00"))
    local = created.astimezone(zoneinfo.ZoneInfo(TIME_ZONE))
    clock = f"{local.hour % 12 or 12}:{local.minute:02d}"
    stamp = browser.find_element(By.CSS_SELECTOR, ".facts time")
    wait_for(browser, lambda d: stamp.get_attribute("data-local") == "1", "the time was not localised")
    assert clock in stamp.text, (clock, stamp.text)
    assert stamp.get_attribute("title") == created.strftime("%Y-%m-%d %H:%M:%S UTC")


def test_the_policy_forms_checkboxes_and_save_button_each_have_a_line(browser, world):
    """The "save anyway" box once ran into the Notify label, and the Save button sat
    on the cancel-callback box's line: each is now below the one before it."""
    from selenium.webdriver.common.by import By

    sign_in_by_link(browser, world, "root")
    browser.get(world.url + "/app/policies")
    wait_for(browser, lambda d: d.title.startswith("Policies"), "the policies page did not open")

    def box(css: str) -> dict:
        return browser.find_element(By.CSS_SELECTOR, css).rect

    def below(lower: dict, upper: dict) -> bool:
        return lower["y"] >= upper["y"] + upper["height"] - 1  # a pixel of rounding

    anyway = box("label:has(> input[name=allow_unknown_reviewers])")
    notify = box("label[for=notify]")
    cancel = box("label:has(> input[name=cancel_callback])")
    save = box("#policy-form button[type=submit]")
    assert below(notify, anyway), (anyway, notify)
    assert below(save, cancel), (cancel, save)
