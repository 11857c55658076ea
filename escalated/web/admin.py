"""Admin pages: policies, users and API keys (CONTRACT §11). Reviewers get 403.

A secret (a new token, a sign-in link) is shown once, on the page that
answers the form that made it: never in a URL, never again.
"""

from __future__ import annotations

import re

from aiohttp import web

from escalated.core.admin import PolicyRequest, UnknownReviewers
from escalated.core.weblinks import login_url
from escalated.domain.masking import mask_targets, unmask_targets
from escalated.domain.scopes import ALL_SCOPES, READ, WRITE
from escalated.domain.validation import POLICY_KEY
from escalated.errors import ConfigError
from escalated.http.appkeys import ADMIN, SETTINGS
from escalated.timeutil import format_duration_s, parse_duration_s
from escalated.web import session
from escalated.web.policyreview import levels_to_save, needs_saved, review_values
from escalated.web.render import page, see_other

_SEPARATORS = re.compile(r"[,\n]")
# The new-key form's boxes ticked at first: what an agent needs (ask, then
# wait). `keys create` and POST /api-keys keep all five (CONTRACT §2, §16).
AGENT_SCOPES = (WRITE, READ)


def split_list(text: str) -> tuple[str, ...]:
    """``reviewers`` and ``notify`` fields: comma- or newline-separated."""
    return tuple(part.strip() for part in _SEPARATORS.split(text or "") if part.strip())


def _text(data, name: str) -> str:
    value = data.get(name, "")
    return value.strip() if isinstance(value, str) else ""


# -- policies -------------------------------------------------------------------


async def policies(request: web.Request, *, error: str | None = None, values=None, status: int = 200) -> web.Response:
    who = await session.admin(request)
    found = await request.config_dict[ADMIN].policies(who.principal)
    editing = next((p for p in found if p.key == request.query.get("edit")), None)
    if values is None and editing is not None:
        values = {
            "key": editing.key,
            "reviewers": "\n".join(editing.reviewers),
            "notify": "\n".join(mask_targets(editing.notify)),  # a line sent back unchanged keeps its target
            "sla": format_duration_s(editing.sla_s) if editing.sla_s is not None else "",
            "default_choice": editing.default_choice or "",
            "cancel_callback": "1" if editing.cancel_callback else "",
            **review_values(editing.review),
        }
    context = {"policies": found, "error": error, "values": values or {}, "duration": format_duration_s, "masked": mask_targets}
    return page(request, "policies.html", context, status=status)


async def _notify(request: web.Request, data, who, key: str) -> tuple[str, ...]:
    """The targets to save. The form shows a saved policy's webhook and Slack
    URLs masked: a masked line sent back stands for the saved target, a blank
    field keeps the saved targets, and only the "notify no one" box clears them."""
    if data.get("notify_none"):
        return ()
    # Only a well-formed key is looked up (saving refuses the others in words).
    saved = await request.config_dict[ADMIN].policy(who.principal, key=key) if POLICY_KEY.fullmatch(key) else None
    stored = saved.notify if saved is not None else ()
    submitted = split_list(_text(data, "notify"))
    return unmask_targets(submitted, stored=stored) if submitted else stored


async def _levels(request: web.Request, data, who, key: str) -> tuple[str, ...]:
    """The levels to save (CONTRACT §15): masked targets stand for the saved ones."""
    text = _text(data, "levels")
    saved = None
    if needs_saved(text) and POLICY_KEY.fullmatch(key):
        saved = await request.config_dict[ADMIN].policy(who.principal, key=key)
    return levels_to_save(text, saved=saved)


async def save_policy(request: web.Request) -> web.Response:
    data = await session.form(request)
    who = await session.admin(request)
    key = _text(data, "key")
    try:
        notify = await _notify(request, data, who, key)
        levels = await _levels(request, data, who, key)
    except ConfigError as exc:
        return await policies(request, error=exc.detail, values=data, status=422)
    wanted = PolicyRequest(
        key=key,
        reviewers=split_list(_text(data, "reviewers")),
        notify=notify,
        sla=_text(data, "sla") or None,
        default_choice=_text(data, "default_choice") or None,
        cancel_callback=bool(data.get("cancel_callback")),
        allow_unknown_reviewers=bool(data.get("allow_unknown_reviewers")),
        remind_every=_text(data, "remind_every") or None,
        levels=levels,
        quorum=_text(data, "quorum") or None,
        quorum_choices=split_list(_text(data, "quorum_choices")),
    )
    try:
        await request.config_dict[ADMIN].set_policy(who.principal, request=wanted)
    except UnknownReviewers as exc:
        refused = f"{exc.detail}; add them first, or tick 'save anyway' (its escalations would reach no one until then)"
        return await policies(request, error=refused, values=data, status=422)
    except ConfigError as exc:
        return await policies(request, error=exc.detail, values=data, status=422)
    return see_other("/app/policies")


async def delete_policy(request: web.Request) -> web.Response:
    await session.form(request)
    who = await session.admin(request)
    await request.config_dict[ADMIN].delete_policy(who.principal, key=request.match_info["key"])
    return see_other("/app/policies")


# -- users ----------------------------------------------------------------------


async def users(request: web.Request, *, shown: dict | None = None, error: str | None = None, status: int = 200):
    who = await session.admin(request)
    found = await request.config_dict[ADMIN].users(who.principal)
    return page(request, "users.html", {"users": found, "shown": shown, "error": error}, status=status)


async def add_user(request: web.Request) -> web.Response:
    data = await session.form(request)
    who = await session.admin(request)
    name = _text(data, "name")
    try:
        token = await request.config_dict[ADMIN].add_user(
            who.principal,
            name=name,
            role=_text(data, "role") or "reviewer",
            groups=split_list(_text(data, "groups")),
            email=_text(data, "email") or None,
            slack_id=_text(data, "slack_id") or None,
        )
    except ConfigError as exc:
        return await users(request, error=exc.detail, status=422)
    return await users(request, shown={"what": f"Token for {name}", "secret": token})


async def rotate_token(request: web.Request) -> web.Response:
    await session.form(request)
    who = await session.admin(request)
    name = request.match_info["name"]
    try:
        token = await request.config_dict[ADMIN].rotate_token(who.principal, name=name)
    except ConfigError as exc:
        return await users(request, error=exc.detail, status=422)
    what = f"New token for {name} (the old one and its web sessions have ended)"
    return await users(request, shown={"what": what, "secret": token})


async def login_link(request: web.Request) -> web.Response:
    data = await session.form(request)
    who = await session.admin(request)
    name = request.match_info["name"]
    try:
        ttl_s = parse_duration_s(_text(data, "ttl") or "15m")
        secret = await request.config_dict[ADMIN].login_link(who.principal, name=name, ttl_s=ttl_s)
    except ConfigError as exc:
        return await users(request, error=exc.detail, status=422)
    base = request.config_dict[SETTINGS].public_url or f"{request.scheme}://{request.host}"
    return await users(request, shown={"what": f"Single-use sign-in link for {name}", "secret": login_url(base, secret)})


# -- API keys -------------------------------------------------------------------


async def keys(request: web.Request, *, shown: dict | None = None, error: str | None = None, status: int = 200):
    who = await session.admin(request)
    found = await request.config_dict[ADMIN].list_keys(who.principal)
    context = {"keys": found, "shown": shown, "error": error, "all_scopes": ALL_SCOPES, "default_scopes": AGENT_SCOPES}
    return page(request, "keys.html", context, status=status)


async def create_key(request: web.Request) -> web.Response:
    data = await session.form(request)
    who = await session.admin(request)
    name = _text(data, "name") or None
    try:
        scopes = frozenset(data.getall("scopes", []))
        if not scopes or not scopes <= frozenset(ALL_SCOPES):
            raise ConfigError("choose at least one scope")
        expires_in = _text(data, "expires_in")
        expires_ms = request.config_dict[SETTINGS].clock() + int(parse_duration_s(expires_in) * 1000) if expires_in else None
        secret, info = await request.config_dict[ADMIN].issue_key(who.principal, name=name, scopes=scopes, expires_ms=expires_ms)
    except ConfigError as exc:
        return await keys(request, error=exc.detail, status=422)
    return await keys(request, shown={"what": f"API key {name or info.id}", "secret": secret})


async def revoke_key(request: web.Request) -> web.Response:
    await session.form(request)
    who = await session.admin(request)
    await request.config_dict[ADMIN].revoke_key(who.principal, key_id=request.match_info["id"])
    return see_other("/app/keys")


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/policies", policies, allow_head=False)
    router.add_post("/policies", save_policy)
    router.add_post("/policies/{key}/delete", delete_policy)
    router.add_get("/users", users, allow_head=False)
    router.add_post("/users", add_user)
    router.add_post("/users/{name}/token", rotate_token)
    router.add_post("/users/{name}/login-link", login_link)
    router.add_get("/keys", keys, allow_head=False)
    router.add_post("/keys", create_key)
    router.add_post("/keys/{id}/revoke", revoke_key)
