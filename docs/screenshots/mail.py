"""Regenerate docs/screenshots/email*.png: ``python docs/screenshots/mail.py``.

A real ``escalated serve`` on a scratch database sends its notification email
to a real SMTP server (aiosmtpd, in this process); the received message's
HTML part is photographed by headless Chromium (Debian's ``chromium`` and
``chromium-driver``), then its first decision link is opened, showing the
confirm page a reviewer sees (opening it decides nothing).
"""

from __future__ import annotations

import email
import email.policy
import re
import socket
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from aiosmtpd.controller import Controller  # noqa: E402

from tests.support.server import ServerProcess  # noqa: E402
from tests.web.browser import start_chromium, stop_chromium  # noqa: E402
from tests.web.support import api  # noqa: E402

ESCALATION = {
    "policy": "refunds.large",
    "agentId": "billing-agent",
    "runId": "run-2291",
    "subject": {"type": "order", "id": "o-981", "label": "Order #981 (Jane Doe)"},
    "question": "Refund 1,200 EUR to the customer's card?",
    "evidence": [
        "Customer since 2019, 41 orders, no earlier refunds",
        "Parcel marked delivered; customer reports it empty",
        "Carrier claim opened: CLM-55012",
    ],
    "choices": [{"id": "approve", "label": "Approve refund"}, {"id": "deny", "label": "Deny"}],
}


class Inbox:
    def __init__(self) -> None:
        self.messages: list = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's hook name)
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        return "250 OK"


def received_html(inbox: Inbox, *, timeout_s: float = 20.0) -> str:
    deadline = time.monotonic() + timeout_s
    while not inbox.messages:
        if time.monotonic() > deadline:
            raise SystemExit("no email arrived")
        time.sleep(0.05)
    return inbox.messages[0].get_body(preferencelist=("html",)).get_content()


def main() -> None:
    inbox = Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    with tempfile.TemporaryDirectory() as scratch:
        server = ServerProcess(db=Path(scratch) / "escalated.db", args=("--smtp-url", f"smtp://127.0.0.1:{port}")).start()
        try:
            server.cli("users", "add", "dana", "--group", "finance", "--email", "dana@example.com")
            server.cli("policy", "set", "refunds.large", "--reviewer", "group:finance", "--notify", "email:dana@example.com",
                       "--sla", "4h", "--default-choice", "deny")  # fmt: skip
            status, body = api(server.url, "POST", "/escalations", server.bootstrap_key, ESCALATION)
            assert status == 201, body
            html = received_html(inbox)
            page = Path(scratch) / "email.html"
            page.write_text(html, encoding="utf-8")
            driver = start_chromium(width=760, height=720)
            try:
                driver.get(page.as_uri())
                driver.save_screenshot(str(HERE / "email.png"))
                first_link = re.search(r'href="([^"]+/app/d/[^"]+)"', html).group(1)
                driver.set_window_size(760, 560)
                driver.get(first_link)
                driver.save_screenshot(str(HERE / "email-confirm.png"))
            finally:
                stop_chromium(driver)
        finally:
            server.stop()
            controller.stop()


if __name__ == "__main__":
    main()
