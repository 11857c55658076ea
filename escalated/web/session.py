"""The signed-in user of a web request, the session cookie and CSRF checks.

Every state-changing form carries ``csrf``; ``form()`` refuses (403) a post
without the right one. Before sign-in, a short-lived pre-session cookie
plays the same part for the sign-in form, so nobody can sign a browser in
to their own account from another site: a sign-in post without that cookie
is refused, whatever its token (the token of no cookie would be an HMAC
with an empty key, which anyone can compute).
"""

from __future__ import annotations

import secrets

from aiohttp import web
from multidict import MultiDictProxy

from escalated.errors import EscalatedError
from escalated.http.appkeys import SETTINGS, SIGN_IN_LIMITER, WEB_SESSIONS
from escalated.core.websessions import NewSession, SignedIn, csrf_ok, csrf_token

SESSION_COOKIE = "escalated_session"
PRELOGIN_COOKIE = "escalated_prelogin"
COOKIE_PATH = "/app"
SIGNED_IN = web.RequestKey("signed_in", SignedIn) if hasattr(web, "RequestKey") else "escalated.signed_in"


class SignedOut(EscalatedError):
    """No live session: the middleware sends the browser to the sign-in page."""

    code, title = "signed_out", "Signed out"


class CsrfRefused(EscalatedError):
    code, title = "csrf", "Form refused"


class AdminOnly(EscalatedError):
    code, title = "admin_only", "Admins only"


class MalformedForm(EscalatedError):
    code, title = "malformed_form", "Malformed form"


async def posted(request: web.Request) -> MultiDictProxy:
    """The posted form. A body that is not form data in UTF-8 (no browser sends
    one) is the sender's mistake, answered 400 in words, not our 500."""
    try:
        return await request.post()
    except (ValueError, web.RequestPayloadError):  # UnicodeDecodeError is a ValueError
        raise MalformedForm("the form's data could not be read (it is not form data in UTF-8); reload the page and try again") from None


def _secure(request: web.Request) -> bool:
    public_url = request.config_dict[SETTINGS].public_url
    return public_url is not None and public_url.startswith("https://")


def set_cookie(response: web.StreamResponse, request: web.Request, name: str, value: str) -> None:
    response.set_cookie(
        name, value, path=COOKIE_PATH, httponly=True, samesite="Lax", secure=_secure(request) or None
    )


def start(response: web.StreamResponse, request: web.Request, new: NewSession) -> None:
    set_cookie(response, request, SESSION_COOKIE, new.secret)
    response.del_cookie(PRELOGIN_COOKIE, path=COOKIE_PATH)


def end(response: web.StreamResponse) -> None:
    response.del_cookie(SESSION_COOKIE, path=COOKIE_PATH)


async def signed_in(request: web.Request) -> SignedIn:
    """The request's session, or SignedOut."""
    cached = request.get(SIGNED_IN)
    if cached is not None:
        return cached
    found = await request.config_dict[WEB_SESSIONS].signed_in(request.cookies.get(SESSION_COOKIE))
    if found is None:
        raise SignedOut("sign in first")
    request[SIGNED_IN] = found
    return found


async def admin(request: web.Request) -> SignedIn:
    who = await signed_in(request)
    if who.principal.role != "admin":
        raise AdminOnly("this page is for admins; ask one to change policies, users or keys")
    return who


async def form(request: web.Request) -> MultiDictProxy:
    """A signed-in user's posted form, once its CSRF token checks out."""
    await signed_in(request)
    data = await posted(request)
    if not csrf_ok(request.cookies.get(SESSION_COOKIE, ""), _field(data, "csrf")):
        raise CsrfRefused("this form is missing its security token or it has expired; reload the page and try again")
    return data


def throttle(request: web.Request) -> None:
    """Sign-in posts, sign-in links and decision links: a token bucket per
    client address (``serve --sign-in-rate-limit``), checked before the
    form or the secret is read, so a refused try uses nothing up."""
    limiter = request.config_dict.get(SIGN_IN_LIMITER)
    if limiter is not None:
        limiter.check(request.remote)


def prelogin_secret(request: web.Request) -> tuple[str, bool]:
    """The pre-session secret and whether it is new (then set the cookie)."""
    current = request.cookies.get(PRELOGIN_COOKIE)
    return (current, False) if current else (secrets.token_urlsafe(24), True)


def prelogin_csrf(secret: str) -> str:
    return csrf_token(secret)


async def login_form(request: web.Request) -> MultiDictProxy:
    """The sign-in form, posted with the token bound to the pre-session
    cookie this browser received with it."""
    data = await posted(request)
    if not csrf_ok(request.cookies.get(PRELOGIN_COOKIE), _field(data, "csrf")):
        raise CsrfRefused("the sign-in form expired or did not come from this site; reload it and try again")
    return data


def _field(data: MultiDictProxy, name: str) -> str | None:
    value = data.get(name)
    return value if isinstance(value, str) else None
