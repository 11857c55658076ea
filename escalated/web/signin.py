"""Sign-in with a user token or a single-use link, and sign-out (CONTRACT §11)."""

from __future__ import annotations

from aiohttp import web

from escalated.errors import Unauthenticated
from escalated.http.appkeys import WEB_SESSIONS
from escalated.web import session
from escalated.web.render import page, see_other


def _login_page(request: web.Request, *, error: str | None = None, status: int = 200) -> web.Response:
    secret, new = session.prelogin_secret(request)
    response = page(request, "login.html", {"login_csrf": session.prelogin_csrf(secret), "error": error}, status=status)
    if new:
        session.set_cookie(response, request, session.PRELOGIN_COOKIE, secret)
    return response


async def login_page(request: web.Request) -> web.StreamResponse:
    # Shown even to a signed-in browser: signing in again (as someone else) replaces the session.
    return _login_page(request)


async def login(request: web.Request) -> web.StreamResponse:
    session.throttle(request)
    data = await session.login_form(request)
    token = data.get("token")
    try:
        new = await request.config_dict[WEB_SESSIONS].sign_in_with_token(token if isinstance(token, str) else "")
    except Unauthenticated as exc:
        return _login_page(request, error=exc.detail, status=401)
    await _end_previous(request)
    return _signed_in(request, new)


async def _end_previous(request: web.Request) -> None:
    """Signing in again ends the session this browser had, if any."""
    previous = request.cookies.get(session.SESSION_COOKIE)
    if previous:
        await request.config_dict[WEB_SESSIONS].sign_out(previous)


async def login_link_page(request: web.Request) -> web.StreamResponse:
    """A GET never uses the link up: mail scanners and link previews fetch
    links, and a page another site sends the browser to must not sign it in.
    The button posts the link back with the sign-in form's CSRF token."""
    session.throttle(request)
    secret, new = session.prelogin_secret(request)
    response = page(request, "login_link.html", {"login_csrf": session.prelogin_csrf(secret)})
    if new:
        session.set_cookie(response, request, session.PRELOGIN_COOKIE, secret)
    return response


async def login_link(request: web.Request) -> web.StreamResponse:
    session.throttle(request)
    await session.login_form(request)
    try:
        new = await request.config_dict[WEB_SESSIONS].sign_in_with_link(request.match_info["secret"])
    except Unauthenticated as exc:
        return _login_page(request, error=exc.detail, status=401)
    await _end_previous(request)
    return _signed_in(request, new)


def _signed_in(request: web.Request, new) -> web.StreamResponse:
    """Always a fresh session id (no fixation); the old one, if any, is simply replaced."""
    response = see_other("/app/")
    session.start(response, request, new)
    return response


async def logout(request: web.Request) -> web.StreamResponse:
    await session.form(request)
    await request.config_dict[WEB_SESSIONS].sign_out(request.cookies[session.SESSION_COOKIE])
    response = see_other("/app/login")
    session.end(response)
    return response


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/login", login_page, allow_head=False)
    router.add_post("/login", login)
    router.add_get("/login/{secret}", login_link_page, allow_head=False)
    router.add_post("/login/{secret}", login_link)
    router.add_post("/logout", logout)
