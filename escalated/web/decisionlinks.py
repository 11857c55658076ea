"""Email decision links (issue #16): ``/app/d/{secret}``.

GET shows what the link would do and one button; it never decides (mail
scanners and link previews fetch links). POST decides as the link's user.
No session and no CSRF token: the secret in the URL is the only credential,
and no cookie is read or set, so another site can do nothing with a browser
that it could not do with the secret itself.
"""

from __future__ import annotations

from aiohttp import web

from escalated.core import decisionlinks as links
from escalated.core.decisionlinks import LinkPage
from escalated.http.appkeys import DECISION_LINKS
from escalated.web.render import page
from escalated.web.session import posted, throttle

# The page's status for each state of its link (gone once it cannot decide).
STATUS_OF = {
    links.READY: 200,
    links.DECIDED: 200,
    links.USED: 410,
    links.EXPIRED: 410,
    links.REPLACED: 410,
    links.SUPERSEDED: 410,
    links.REFUSED: 403,
}


def _answer(request: web.Request, found: LinkPage) -> web.Response:
    return page(request, "decision_link.html", {"link": found}, status=STATUS_OF[found.state])


async def confirm_page(request: web.Request) -> web.Response:
    throttle(request)
    return _answer(request, await request.config_dict[DECISION_LINKS].page(request.match_info["secret"]))


async def decide(request: web.Request) -> web.Response:
    throttle(request)
    await posted(request)  # the form has no fields; read it so the connection stays usable
    return _answer(request, await request.config_dict[DECISION_LINKS].decide(request.match_info["secret"]))


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/d/{secret}", confirm_page, allow_head=False)
    router.add_post("/d/{secret}", decide)
