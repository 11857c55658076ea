"""Where things are in the web app: one spelling of each page's path, for
the links in emails, Slack messages and sign-in links, and the web app's own
redirects and templates.

The base is ``Service.web_url`` (``serve --public-url``, else the address
``serve`` listens on), or for a sign-in link the ``--url`` of ``escalated
users login-link`` or the admin page's own address; a trailing slash on it
is dropped, so no link holds ``//app``.
The web app's routes (escalated/web) mount the same paths under
``APP_PREFIX``.
"""

from __future__ import annotations

APP_PREFIX = "/app"  # where serve mounts the web app


def escalation_path(escalation_id: str) -> str:
    return f"{APP_PREFIX}/escalations/{escalation_id}"


def escalation_url(base_url: str, escalation_id: str) -> str:
    return base_url.rstrip("/") + escalation_path(escalation_id)


def login_url(base_url: str, secret: str) -> str:
    """A single-use sign-in link (core/websessions.py mints its secret)."""
    return f"{base_url.rstrip('/')}{APP_PREFIX}/login/{secret}"


def decision_link_url(base_url: str, secret: str) -> str:
    """A one-click decision link from an email (core/decisionlinks.py mints its secret)."""
    return f"{base_url.rstrip('/')}{APP_PREFIX}/d/{secret}"
