"""``POST /integrations/slack/interactions``: Slack calls it when someone
presses a decide button (issue #16).

Order matters. The body is read within the server's limit, then its Slack
signature is checked before anything looks inside it: an unsigned, wrongly
signed or stale request (a replay after five minutes) is a 401 and nothing
else. Only then is it parsed; malformed is the contract's 400/415/422. The
click is acted on (core/slackdecide.py), Slack gets its 200 at once, and the
reply (engine/slackmessages.py renders what the click came to) goes to the
click's ``response_url`` in the background (engine/slackreplies.py, which
says why not through the outbox).

Without ``--slack-signing-secret`` the route answers 404 saying so: with no
secret nothing could be verified.
"""

from __future__ import annotations

import time

from aiohttp import web

from escalated.core.slackdecide import SlackDecisions
from escalated.domain.slack import check_signature, parse_interaction
from escalated.domain.urlsafety import literal_problem
from escalated.engine.slackmessages import click_reply
from escalated.engine.slackreplies import SlackReplies
from escalated.errors import NotFound, UnsupportedMediaType, ValidationFailed, field_error
from escalated.http.appkeys import ADMIN, SERVICE, SETTINGS, SLACK_DECISIONS, SLACK_REPLIES
from escalated.http.body import read_bytes

PATH = "/integrations/slack/interactions"
FORM = "application/x-www-form-urlencoded"


async def interactions(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    if settings.slack_signing_secret is None:
        raise NotFound("Slack interactions are off: start escalated serve with --slack-signing-secret")
    body = await read_bytes(request)
    check_signature(
        settings.slack_signing_secret,
        timestamp=request.headers.get("X-Slack-Request-Timestamp"),
        sent=request.headers.get("X-Slack-Signature"),
        body=body,
        now_s=time.time(),
    )
    if request.content_type != FORM:
        raise UnsupportedMediaType(f"Slack sends interactions as {FORM}")
    click = parse_interaction(body)
    if click is None:
        return web.Response(status=200)  # another kind of interaction of the app: nothing to do
    if problem := literal_problem(click.response_url, settings.callback_rules):
        raise ValidationFailed("response_url is not a URL we may call", errors=[field_error("payload.response_url", problem)])
    reply = click_reply(await request.app[SLACK_DECISIONS].click(click))
    request.app[SLACK_REPLIES].send(click.response_url, reply, escalation_id=click.escalation_id)
    return web.Response(status=200)


async def _slack_ctx(app: web.Application):
    settings = app[SETTINGS]
    app[SLACK_DECISIONS] = SlackDecisions(app[SERVICE], admin=app[ADMIN])
    async with SlackReplies(rules=settings.callback_rules, timeout_s=settings.delivery_timeout_s) as replies:
        app[SLACK_REPLIES] = replies
        yield


def add_routes(app: web.Application) -> None:
    """The route always exists (a clear 404 when off); its helpers only with a secret.
    Call after the service's cleanup context is added: it needs the service."""
    app.router.add_post(PATH, interactions)
    if app[SETTINGS].slack_signing_secret is not None:
        app.cleanup_ctx.append(_slack_ctx)
