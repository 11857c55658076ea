"""The web app (CONTRACT §11): reviewers and admins in a browser, under ``/app/``.

A client of the core like the TUI: handlers read the request, call the
service, render a server-side template. Every action is a plain form post;
``static/app.js`` only adds live updates and keyboard shortcuts. Templates
and assets ship inside the package: nothing is fetched at run time.
"""

from __future__ import annotations

from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import web

from escalated.core.weblinks import APP_PREFIX
from escalated.errors import EscalatedError, NotFound
from escalated.http.problems import problem, retry_after
from escalated.http.statuses import status_of
from escalated.web import admin, decisionlinks, escalations, live, remember, signin, views
from escalated.web.render import page, see_other
from escalated.web.session import SignedOut

HERE = Path(__file__).parent
PREFIX = APP_PREFIX  # the core builds links to pages under it (core/weblinks.py)
# Pages and their assets come from this process only; no inline script, no framing.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}


@web.middleware
async def pages_middleware(request: web.Request, handler) -> web.StreamResponse:
    """Errors as pages in words, signed-out visitors to the sign-in page."""
    try:
        response = await handler(request)
    except SignedOut:
        response = see_other(f"{PREFIX}/login")
    except EscalatedError as exc:
        response = _error_answer(request, exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        error = NotFound("there is no such page") if exc.status == 404 else EscalatedError(exc.reason)
        response = page(request, "error.html", {"error": error, "status": exc.status}, status=exc.status)
    if not response.prepared:
        response.headers.update(SECURITY_HEADERS)
        if response.content_type == "text/html":
            response.headers["Cache-Control"] = "no-store"
    return response


def _error_answer(request: web.Request, exc: EscalatedError) -> web.Response:
    """A page in words; the problem+json body when the client asks for JSON
    only (a script, not a browser). ``Retry-After`` on either when it has one."""
    accept = request.headers.get("Accept", "")
    if "json" in accept and "text/html" not in accept:
        return problem(exc)
    status = status_of(exc)
    response = page(request, "error.html", {"error": exc, "status": status}, status=status)
    if (wait_s := exc.extra.get("retry_after_s")) is not None:
        response.headers["Retry-After"] = retry_after(wait_s)
    return response


def create_web_app() -> web.Application:
    webapp = web.Application(middlewares=[pages_middleware])
    env = aiohttp_jinja2.setup(
        webapp,
        loader=jinja2.PackageLoader("escalated.web", "templates"),
        autoescape=jinja2.select_autoescape(default=True),
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(views.FILTERS)
    env.globals.update(views.GLOBALS)
    env.globals.update(remember.GLOBALS)
    signin.add_routes(webapp.router)
    decisionlinks.add_routes(webapp.router)
    escalations.add_routes(webapp.router)
    live.add_routes(webapp.router)
    admin.add_routes(webapp.router)
    remember.add_routes(webapp.router)
    webapp.router.add_static("/static/", HERE / "static", append_version=True)
    return webapp


async def _to_app(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound(f"{PREFIX}/")


def add_to(app: web.Application) -> None:
    """Mount the web app under /app/; ``/`` and ``/app`` lead there."""
    app.router.add_get("/", _to_app, allow_head=False)
    app.router.add_get(PREFIX, _to_app, allow_head=False)
    app.add_subapp(f"{PREFIX}/", create_web_app())
