"""Talking to the web app like a browser without JavaScript: forms, cookies, redirects by hand."""

from __future__ import annotations

import http.client
import json
import re
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode, urlsplit

import attrs

_CSRF = re.compile(r'name="csrf" value="([^"]*)"')


@attrs.frozen
class Page:
    status: int
    headers: http.client.HTTPMessage
    text: str

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")

    def csrf(self) -> str:
        match = _CSRF.search(self.text)
        assert match, "no csrf field on the page"
        return match.group(1)

    def set_cookies(self) -> dict[str, str]:
        """Each Set-Cookie header, whole, by cookie name."""
        return {h.split("=", 1)[0]: h for h in self.headers.get_all("Set-Cookie") or ()}


class WebClient:
    """One browser: a cookie jar and plain HTTP. Redirects are not followed, so tests see them."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, *, form: dict | None = None, headers: dict | None = None, raw: bytes | None = None
    ) -> Page:
        """``form`` is sent URL-encoded; ``raw`` is sent as it is, with the form's content type."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        hdrs = dict(headers or {})
        if self.cookies:
            hdrs["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body: str | bytes | None = raw
        if form is not None:
            body = urlencode(form)
        if body is not None:
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            page = Page(resp.status, resp.headers, resp.read().decode())
        finally:
            conn.close()
        for header in resp.headers.get_all("Set-Cookie") or ():
            for name, morsel in SimpleCookie(header).items():
                if morsel["max-age"] == "0" or "1970" in morsel["expires"]:
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return page

    def get(self, path: str) -> Page:
        return self.request("GET", path)

    def post(self, path: str, form: dict) -> Page:
        return self.request("POST", path, form=form)

    def sign_in(self, token: str) -> Page:
        csrf = self.get("/app/login").csrf()
        return self.post("/app/login", {"csrf": csrf, "token": token})

    def follow_link(self, link: str) -> Page:
        """Open a sign-in link and press its one button, as a person would."""
        path = "/" + link.split("://", 1)[1].split("/", 1)[1]
        page = self.get(path)
        if page.status != 200:
            return page
        return self.post(path, {"csrf": page.csrf()})

    def submit(self, page_path: str, action: str, fields: dict) -> Page:
        """Post a form the way a browser would: the CSRF token comes from the page it is on."""
        csrf = self.get(page_path).csrf()
        return self.post(action, {"csrf": csrf, **fields})


def api(url: str, method: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    """The JSON API as an agent uses it."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Authorization": f"Bearer {token}"}
    data = None
    if body is not None:
        data = json.dumps(body)
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    return resp.status, (json.loads(raw) if raw else None)
