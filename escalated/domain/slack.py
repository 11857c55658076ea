"""Slack's side of a decision (issue #16): the request signature, the
interaction payload, and the text rules of Slack's ``mrkdwn``.

Pure functions of their arguments (time included), so the HTTP route and
the tests share them and nothing here knows HTTP.

Slack signs every request it sends: ``X-Slack-Signature`` is ``v0=`` and the
hex HMAC-SHA256 of ``v0:{X-Slack-Request-Timestamp}:{raw body}`` keyed with
the app's signing secret. The timestamp bounds a replay to five minutes.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, TypeGuard
from urllib.parse import parse_qs

import attrs
import orjson

from escalated.errors import InvalidJson, Unauthenticated, ValidationFailed, field_error

MAX_SKEW_S = 5 * 60  # Slack's documented window, either way
DECIDE_ACTION = "escalated.decide"  # action_id prefix of our buttons; ".{choice}" keeps them unique
BLOCK_ACTIONS = "block_actions"


def signature(secret: str, *, timestamp: str, body: bytes) -> str:
    """What Slack sends as ``X-Slack-Signature`` for this body at this time."""
    mac = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256)
    return "v0=" + mac.hexdigest()


def check_signature(secret: str, *, timestamp: str | None, sent: str | None, body: bytes, now_s: float) -> None:
    """``Unauthenticated`` unless Slack signed ``body`` with ``secret`` within five minutes of ``now_s``.

    The reasons given name what is wrong, never what was expected.
    """
    if not timestamp or not sent:
        raise Unauthenticated("missing X-Slack-Request-Timestamp or X-Slack-Signature")
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        raise Unauthenticated("X-Slack-Request-Timestamp is not a Unix time in seconds")
    if abs(now_s - int(timestamp)) > MAX_SKEW_S:
        raise Unauthenticated("X-Slack-Request-Timestamp is more than 5 minutes from now (a replay, or a clock off)")
    expected = signature(secret, timestamp=timestamp, body=body).encode()
    if not hmac.compare_digest(expected, sent.encode("utf-8", "replace")):
        raise Unauthenticated("X-Slack-Signature does not match the body")


@attrs.frozen
class Click:
    """One press of one of our buttons, as Slack reports it."""

    user_id: str  # Slack member id (U…)
    escalation_id: str
    choice: str
    response_url: str = attrs.field(repr=False)  # a bearer of the message: never logged


def button_value(escalation_id: str, choice: str) -> str:
    """What a button carries. It only says which button was pressed: the
    server checks the clicker, the routing and the choice again on click."""
    return orjson.dumps({"escalation": escalation_id, "choice": choice}).decode()


def parse_interaction(body: bytes) -> Click | None:
    """The click in a (signed) interaction request; None for anything that is
    not a press of our decide buttons (Slack sends every interaction of the
    app here; those are answered 200 and ignored). Malformed: 400 or 422."""
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body), max_num_fields=20)
    except (UnicodeDecodeError, ValueError):
        raise ValidationFailed("the body is not form-encoded", errors=[field_error("body", "expected payload=JSON")]) from None
    raw = form.get("payload")
    if not raw or len(raw) != 1:
        raise ValidationFailed("one payload field is required", errors=[field_error("payload", "is required once")])
    try:
        payload = orjson.loads(raw[0])
    except orjson.JSONDecodeError as exc:
        raise InvalidJson(f"payload is not valid JSON: {exc.msg}") from None
    if not isinstance(payload, dict):
        raise InvalidJson("payload must be a JSON object")
    if payload.get("type") != BLOCK_ACTIONS:
        return None
    return _click(payload)


def _click(payload: dict[str, Any]) -> Click | None:
    actions = payload.get("actions")
    user = payload.get("user")
    problems = []
    if not isinstance(actions, list) or not actions or not all(isinstance(a, dict) for a in actions):
        problems.append(field_error("payload.actions", "must be a non-empty array of actions"))
    if not isinstance(user, dict) or not _text(user.get("id")):
        problems.append(field_error("payload.user.id", "is required"))
    if not _text(payload.get("response_url")):
        problems.append(field_error("payload.response_url", "is required"))
    if problems:
        raise ValidationFailed(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}", errors=problems)
    assert isinstance(actions, list) and isinstance(user, dict)  # the problems above refused anything else
    action = actions[0]
    if not str(action.get("action_id", "")).startswith(DECIDE_ACTION + "."):
        return None  # not one of our decide buttons
    escalation_id, choice = _value(action.get("value"))
    return Click(user_id=user["id"], escalation_id=escalation_id, choice=choice, response_url=payload["response_url"])


def _value(value: object) -> tuple[str, str]:
    problem = ValidationFailed("the button's value is not ours", errors=[field_error("payload.actions[0].value", "unknown button")])
    if not _text(value):
        raise problem
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        raise problem from None
    if not isinstance(parsed, dict) or not _text(parsed.get("escalation")) or not _text(parsed.get("choice")):
        raise problem
    return parsed["escalation"], parsed["choice"]


def _text(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value) <= 3000


def escape(text: str) -> str:
    """User text made inert in ``mrkdwn``: Slack reads ``<…>`` as links,
    mentions (``<!channel>``) and dates, and ``&`` starts an entity."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """``escape`` undone, for a reader that takes plain text."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
