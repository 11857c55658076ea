"""One place that turns a template and its context into a response."""

from __future__ import annotations

import aiohttp_jinja2
from aiohttp import web

from escalated.http.appkeys import SETTINGS
from escalated.web.session import SIGNED_IN


def page(request: web.Request, template: str, context: dict | None = None, *, status: int = 200) -> web.Response:
    """Render ``template`` with the signed-in user (if any), its CSRF token and the time."""
    who = request.get(SIGNED_IN)
    base = {
        "me": who.principal if who else None,
        "csrf": who.csrf if who else "",
        "now_ms": request.config_dict[SETTINGS].clock(),
        "path": request.path,
    }
    return aiohttp_jinja2.render_template(template, request, {**base, **(context or {})}, status=status)


def see_other(location: str) -> web.Response:
    """Post/redirect/get: a form's success sends the browser to a page to GET.

    A plain response, not ``HTTPSeeOther``: it may carry cookies, and an
    aiohttp HTTP exception is meant to be raised, not returned.
    """
    return web.Response(status=303, headers={"Location": location})
