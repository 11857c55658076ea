"""The suite's test client: raw HTTP over the stdlib (deliberately not our
client library), so a test can send any bytes, headers or chunking it likes.

One connection per request. ``seen`` keeps every response, headers and body,
so a test can scan everything the API ever said (the secrets tests do).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode, urlsplit

import attrs


@attrs.frozen
class Response:
    status: int
    headers: http.client.HTTPMessage  # case-insensitive look-ups
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";")[0].strip()

    def problem(self, status: int, code: str) -> dict:
        """Assert this is the problem+json of ``status``/``code``; return it."""
        assert self.status == status, (self.status, self.body[:500])
        assert self.content_type == "application/problem+json", self.headers
        body = self.json()
        assert body["code"] == code, body
        return body


@attrs.define
class Http:
    url: str
    seen: list[bytes] = attrs.field(factory=list)  # every response: its header lines, then its body

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        json_body: Any = None,
        body: bytes | Iterable[bytes] | None = None,
        headers: dict[str, str] | None = None,
        query: dict[str, Any] | None = None,
        chunked: bool = False,
        timeout_s: float = 30.0,
    ) -> Response:
        hdrs = dict(headers or {})
        if token is not None:
            hdrs.setdefault("Authorization", f"Bearer {token}")
        if json_body is not None:
            body = json.dumps(json_body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        if query:
            path = f"{path}?{urlencode({k: v for k, v in query.items() if v is not None})}"
        if chunked:
            hdrs["Transfer-Encoding"] = "chunked"
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout_s)
        try:
            conn.request(method, path, body=body, headers=hdrs, encode_chunked=chunked)
            resp = conn.getresponse()
            out = Response(status=resp.status, headers=resp.headers, body=resp.read())
        finally:
            conn.close()
        self.seen.append(str(out.headers).encode() + out.body)
        return out

    def get(self, path: str, **kw: Any) -> Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> Response:
        return self.request("POST", path, **kw)

    def delete(self, path: str, **kw: Any) -> Response:
        return self.request("DELETE", path, **kw)
