"""Who is signed in to the web app: sessions, sign-in links and CSRF tokens.

A session is a random secret in an HttpOnly cookie; the database keeps only
its hash. The CSRF token is derived from the session secret (an HMAC the
database cannot reproduce), so it needs no storage and dies with the
session. Sessions end on sign-out, after ``idle_s`` without a request,
``lifetime_s`` after sign-in however active, or when the user's token is
rotated (the store's look-up joins on the token hash the session was
started with).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import attrs

from escalated.domain import tokens
from escalated.domain.models import Principal
from escalated.errors import Unauthenticated
from escalated.core.principals import user_principal
from escalated.store.base import Store
from escalated.timeutil import Clock, now_ms

DEFAULT_IDLE_S = 12 * 3600.0
# However active, a session ends this long after sign-in: a stolen or
# forgotten cookie does not live for ever in a tab that keeps polling.
DEFAULT_LIFETIME_S = 24 * 3600.0
DEFAULT_LINK_TTL_S = 15 * 60.0
# last_seen_ms is rewritten at most this often: not a write per page view.
TOUCH_EVERY_MS = 60_000
_SECRET_BYTES = 32


@attrs.frozen
class SignedIn:
    """A live session: who it is and the CSRF token its forms carry."""

    principal: Principal
    csrf: str = attrs.field(repr=False)


@attrs.frozen
class NewSession:
    secret: str = attrs.field(repr=False)  # the cookie's value, shown to nobody else
    signed_in: SignedIn


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def csrf_token(session_secret: str) -> str:
    return hmac.new(session_secret.encode(), b"escalated csrf", hashlib.sha256).hexdigest()


def csrf_ok(session_secret: str | None, presented: str | None) -> bool:
    """No secret, no valid token: the token of an empty secret is an HMAC
    with an empty key, which anyone can compute."""
    if not session_secret or not presented:
        return False
    return hmac.compare_digest(csrf_token(session_secret), presented)


class WebSessions:
    def __init__(
        self, store: Store, *, idle_s: float = DEFAULT_IDLE_S, lifetime_s: float = DEFAULT_LIFETIME_S, clock: Clock = now_ms
    ) -> None:
        self.store = store
        self._clock = clock
        self.idle_ms = int(idle_s * 1000)
        self.lifetime_ms = int(lifetime_s * 1000)

    async def sign_in_with_token(self, token: str) -> NewSession:
        """A user token starts a session; API keys and anything else cannot."""
        token = token.strip()
        if token.startswith(tokens.API_KEY_PREFIX):
            raise Unauthenticated("API keys cannot sign in to the web app; use a user token or a sign-in link")
        if not token.startswith(tokens.USER_TOKEN_PREFIX) or not tokens.well_formed(token):
            raise Unauthenticated("that is not a user token (they start with ain_user_)")
        token_hash = tokens.hash_token(token)
        user = await self.store.user_by_hash(token_hash=token_hash)
        if user is None:
            raise Unauthenticated("unknown user token")
        secret, at_ms = secrets.token_urlsafe(_SECRET_BYTES), self._clock()
        await self.store.start_session(id_hash=_hash(secret), user_id=user.id, user_token_hash=token_hash, at_ms=at_ms)
        return NewSession(secret=secret, signed_in=SignedIn(principal=user_principal(user), csrf=csrf_token(secret)))

    async def sign_in_with_link(self, link_secret: str) -> NewSession:
        secret, at_ms = secrets.token_urlsafe(_SECRET_BYTES), self._clock()
        user = await self.store.redeem_login_link(secret_hash=_hash(link_secret), session_hash=_hash(secret), at_ms=at_ms)
        if user is None:
            raise Unauthenticated("this sign-in link is used, expired or unknown; ask for a new one")
        return NewSession(secret=secret, signed_in=SignedIn(principal=user_principal(user), csrf=csrf_token(secret)))

    async def signed_in(self, session_secret: str | None, *, at_ms: int | None = None) -> SignedIn | None:
        """The session's user, or None when there is no live session."""
        if not session_secret:
            return None
        at_ms = self._clock() if at_ms is None else at_ms
        id_hash = _hash(session_secret)
        found = await self.store.session_user(id_hash=id_hash)
        if found is None:
            return None
        user, created_ms, last_seen_ms = found
        if at_ms - last_seen_ms > self.idle_ms or at_ms - created_ms > self.lifetime_ms:
            await self.store.end_session(id_hash=id_hash, at_ms=at_ms)
            return None
        if at_ms - last_seen_ms > TOUCH_EVERY_MS:
            await self.store.touch_session(id_hash=id_hash, at_ms=at_ms)
        return SignedIn(principal=user_principal(user), csrf=csrf_token(session_secret))

    async def sign_out(self, session_secret: str) -> None:
        await self.store.end_session(id_hash=_hash(session_secret), at_ms=self._clock())

    async def add_login_link(self, workspace_id: str, name: str, *, ttl_s: float, at_ms: int) -> str:
        """Mint a single-use sign-in link for user ``name``; only its hash is stored."""
        secret = secrets.token_urlsafe(_SECRET_BYTES)
        await self.store.add_login_link(
            secret_hash=_hash(secret), workspace_id=workspace_id, name=name, at_ms=at_ms, expires_ms=at_ms + int(ttl_s * 1000)
        )
        return secret
