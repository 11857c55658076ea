"""Where an escalation's page is in the web app: one spelling of its path,
for the links in emails and Slack messages and the web app's own redirects.

The base is ``Service.web_url`` (``serve --public-url``, else the address
``serve`` listens on); a trailing slash on it is dropped, as sign-in and
decision links drop it, so no link holds ``//app``.
"""

from __future__ import annotations

APP_PREFIX = "/app"  # where serve mounts the web app


def escalation_path(escalation_id: str) -> str:
    return f"{APP_PREFIX}/escalations/{escalation_id}"


def escalation_url(base_url: str, escalation_id: str) -> str:
    return base_url.rstrip("/") + escalation_path(escalation_id)
