"""The notification email (issue #16): a multipart/alternative message, plain
text and HTML, with the question, subject, evidence, deadline, one button per
choice (decision links, when the recipient is a routed user) and a link to
the escalation's page.

Built from the outbox body (the escalation as the API shows it) and the
``EmailPlan`` the sender got from the core at delivery time; the links exist
only in the message, never in the outbox. Everything the agent wrote is
escaped in the HTML part (Jinja autoescape) and flattened to one line in
headers, so hostile content can neither inject markup nor headers.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formatdate, make_msgid

import jinja2
import orjson

from escalated.domain.models import EVENT_ESCALATED, EVENT_REMINDED
from escalated.core.decisionlinks import EmailPlan
from escalated.domain.mailserver import DEFAULT_SENDER
from escalated.domain.wording import choice_label

MAX_SUBJECT = 200

_env = jinja2.Environment(
    loader=jinja2.PackageLoader("escalated.engine", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


def one_line(text: str, *, limit: int = MAX_SUBJECT) -> str:
    """Header-safe: every run of whitespace (CR, LF, tabs, U+2028…) becomes one space."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# A reminder or a level reached (CONTRACT §15) says so before the question.
SUBJECT_LEAD = {EVENT_REMINDED: "Reminder, decision needed", EVENT_ESCALATED: "Escalated to you, decision needed"}


def deadline_text(deadline_at: str | None) -> str | None:
    """``2026-11-23T19:47:42.456Z`` (the API's form) as ``2026-11-23 19:47 UTC``: read by people."""
    return None if deadline_at is None else f"{deadline_at[:10]} {deadline_at[11:16]} UTC"


def compose(body: bytes, *, address: str, plan: EmailPlan | None, sender: str = DEFAULT_SENDER) -> EmailMessage:
    """``sender``: ``serve --smtp-from``, the From: line (and the Message-ID's domain)."""
    payload = orjson.loads(body)
    esc = payload["escalation"]
    context = {
        "esc": esc,
        "text": payload["text"],
        "plan": plan,
        "links": plan.links if plan else (),
        "deadline": deadline_text(esc.get("deadlineAt")),
        # What happens if nobody answers, by the choice's label (as every screen words it).
        "default": choice_label(esc.get("choices", []), esc.get("defaultChoice")),
    }
    message = EmailMessage()
    message["From"] = sender
    message["To"] = address
    lead = SUBJECT_LEAD.get(payload.get("event"), "Decision needed")
    message["Subject"] = one_line(f"{lead}: {esc['subject']['label']} — {esc['question']}")
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2])
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to this
    message.set_content(_env.get_template("email.txt").render(context))
    message.add_alternative(_env.get_template("email.html").render(context), subtype="html")
    return message
