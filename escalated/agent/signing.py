"""Callback signatures: ``v1=`` + lowercase hex HMAC-SHA256 of the exact body.

The receiver must verify the raw bytes it read; re-serialising the JSON
changes the bytes and breaks verification.
"""

from __future__ import annotations

import hashlib
import hmac

VERSION = "v1"


def sign(body: bytes, secret: str) -> str:
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"{VERSION}={digest}"


def verify(body: bytes, header: str | None, secret: str) -> bool:
    """True only for a well-formed ``v1=<64 hex>`` header matching ``body``.

    Never raises: anything malformed (wrong types included) is simply False.
    The comparison is constant-time.
    """
    try:
        if not isinstance(header, str) or not isinstance(secret, str) or not secret:
            return False
        if not isinstance(body, (bytes, bytearray, memoryview)):
            return False
        version, _, given = header.strip().partition("=")
        if version != VERSION or len(given) != 64:
            return False
        expected = sign(bytes(body), secret)[len(VERSION) + 1 :]
        return hmac.compare_digest(expected.encode("ascii"), given.lower().encode("ascii", "replace"))
    except Exception:
        return False
