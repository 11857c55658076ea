"""Regenerate docs/screenshots/web-*.png: ``python docs/screenshots/web.py``.

A real ``escalated serve`` on a scratch database with the demo's sample
escalations, photographed by headless Chromium (Debian's ``chromium`` and
``chromium-driver``) after signing in with a login link, as a reviewer would.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from escalated.tui.samples import REQUESTS  # noqa: E402
from tests.support.server import ServerProcess  # noqa: E402
from tests.web.browser import start_chromium, stop_chromium  # noqa: E402
from tests.web.support import api  # noqa: E402


def create_body(request: dict) -> dict:
    body = {
        "policy": request["policy"],
        "agentId": request["agent_id"],
        "runId": request["run_id"],
        "subject": request["subject"],
        "question": request["question"],
        "evidence": request["evidence"],
        "choices": request["choices"],
    }
    if request.get("response_fields"):
        body["responseFields"] = request["response_fields"]
    return body


def seed(server: ServerProcess) -> None:
    server.cli("users", "add", "dana", "--group", "finance")
    server.cli("policy", "set", "demo.refunds", "--reviewer", "group:finance", "--sla", "4h", "--default-choice", "deny")
    server.cli("policy", "set", "demo.access", "--reviewer", "dana")
    server.cli("policy", "set", "demo.quick", "--reviewer", "dana", "--sla", "25m", "--default-choice", "deny")
    for request in REQUESTS:
        status, body = api(server.url, "POST", "/escalations", server.bootstrap_key, create_body(request))
        assert status == 201, body


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        server = ServerProcess(db=Path(scratch) / "escalated.db").start()
        try:
            seed(server)
            link = server.cli("users", "login-link", "dana", "--url", server.url)
            driver = start_chromium(width=1000, height=760)
            try:
                driver.get(link)
                driver.find_element("css selector", "#link-form button").click()
                driver.save_screenshot(str(HERE / "web-inbox.png"))
                # The refund: its decide form has a number and a select field.
                driver.find_element("xpath", "//a[contains(., 'Order #981')]").click()
                driver.set_window_size(1000, 1500)
                driver.save_screenshot(str(HERE / "web-detail.png"))
                driver.set_window_size(390, 844)  # a phone
                driver.get(server.url + "/app/")
                driver.save_screenshot(str(HERE / "web-phone.png"))
            finally:
                stop_chromium(driver)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
