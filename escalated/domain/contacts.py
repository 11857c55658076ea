"""Where a user can be reached besides the web app: an email address and a
Slack user id (issue #16). Both are optional and unique per workspace.

Email addresses are compared without regard to case (the domain is
case-insensitive, and in practice so is every mailbox), so they are stored
lower-cased: both dialects then compare them with plain equality and one
unique index, instead of trusting SQLite's ASCII-only ``lower()``.
"""

from __future__ import annotations

import re

from escalated.errors import ConfigError

MAX_EMAIL = 254  # RFC 5321's limit on a path
# One mailbox, nothing else: no display name, no list, no spaces or angle
# brackets (the address goes into a To: header and a notify target).
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$")
# Slack's member ids: U… (or W… for Enterprise Grid), upper-case letters and digits.
_SLACK_ID = re.compile(r"^[UW][A-Z0-9]{2,30}$")


def email_problem(address: str) -> str | None:
    """Why ``address`` is not one plain mailbox (name@example.com), or None."""
    if len(address) > MAX_EMAIL or not _EMAIL.match(address):
        return f"email {address!r} is not one plain address like name@example.com"
    return None


def normal_email(address: str) -> str:
    """The stored and compared form: trimmed, lower case."""
    return address.strip().lower()


def slack_id_problem(slack_id: str) -> str | None:
    if not _SLACK_ID.match(slack_id):
        return f"Slack id {slack_id!r} is not a Slack member id like U012AB3CD (upper-case, starting with U or W)"
    return None


def checked_contacts(*, email: str | None, slack_id: str | None) -> tuple[str | None, str | None]:
    """(email, slack_id) as stored, empty meaning none; ``ConfigError`` naming every problem."""
    email = normal_email(email) if email and email.strip() else None
    slack_id = slack_id.strip() if slack_id and slack_id.strip() else None
    problems = [p for p in (email and email_problem(email), slack_id and slack_id_problem(slack_id)) if p]
    if problems:
        raise ConfigError("; ".join(problems))
    return email, slack_id


def contact_taken(what: str, value: str, *, owner: str) -> str:
    return f"{what} {value} already belongs to user {owner!r} (each names at most one user of a workspace)"
