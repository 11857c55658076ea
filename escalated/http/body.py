"""Reading request bodies: 413, 415 and 400 before anything looks inside."""

from __future__ import annotations

import orjson
from aiohttp import web

from escalated.errors import InvalidJson, PayloadTooLarge, UnsupportedMediaType
from escalated.http.appkeys import SETTINGS


def is_json(content_type: str) -> bool:
    return content_type == "application/json" or (content_type.startswith("application/") and content_type.endswith("+json"))


async def read_bytes(request: web.Request) -> bytes:
    """The raw body within the server's limit (413 otherwise), unparsed."""
    limit = request.app[SETTINGS].max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"body over the limit of {limit} bytes")
    return await _read(request)


async def read_json(request: web.Request, *, optional: bool = False) -> dict:
    """The body as a JSON object. ``optional``: an empty body reads as ``{}``
    (a body over the limit is one, so its 413 comes first all the same)."""
    if optional and not request.body_exists:
        return {}
    raw = await read_json_bytes(request)
    if optional and not raw.strip():
        return {}
    return json_object(raw)


async def read_json_bytes(request: web.Request) -> bytes:
    """The body of a JSON request, unparsed: ``read_json``'s 413, 415 and
    unreadable-body 400, in its order. ``json_object`` parses it."""
    limit = request.app[SETTINGS].max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"body over the limit of {limit} bytes")
    # What clients send, compared as it came before aiohttp parses it (parameters, case).
    if request.headers.get("Content-Type") != "application/json" and not is_json(request.content_type):
        raise UnsupportedMediaType("send the body as application/json")
    try:  # _read's, without its coroutine in between: every create reads its body here
        return await request.read()
    except web.RequestPayloadError as exc:
        raise InvalidJson(f"the body could not be read: {exc}") from None


def json_object(raw: bytes) -> dict:
    """``raw`` as a JSON object; 400 when it is not JSON or not an object."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidJson(_not_json(raw, exc)) from None
    if not isinstance(value, dict):
        raise InvalidJson("body must be a JSON object")
    return value


def _not_json(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """Why ``raw`` is not JSON. orjson says of Latin-1 or UTF-16 bytes "str is not
    valid UTF-8: surrogates not allowed", which names neither the body nor the cure."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"body is not UTF-8 (byte {bad.start} is 0x{raw[bad.start]:02x}); JSON is sent as UTF-8, whatever the charset says"
    return f"body is not valid JSON: {exc.msg}"


async def _read(request: web.Request) -> bytes:
    """The body; one that cannot be decoded (a Content-Encoding it does not match) is not JSON: 400."""
    try:
        return await request.read()  # client_max_size enforces the limit for chunked bodies
    except web.RequestPayloadError as exc:
        raise InvalidJson(f"the body could not be read: {exc}") from None
