"""Secrets we mint: API keys and user tokens.

Format: prefix + 32 base62 characters of randomness (~190 bits) + a
6-character checksum, so a secret scanner, or our own 401 path, can reject a
mistyped key without a database look-up. Stored only as SHA-256 hashes.

Regex for secret scanners: ``ain_(live|user)_[0-9A-Za-z]{38}``
"""

from __future__ import annotations

import hashlib
import re
import secrets
import zlib

API_KEY_PREFIX = "ain_live_"
USER_TOKEN_PREFIX = "ain_user_"
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BODY_LEN = 32
_CHECK_LEN = 6
TOKEN_PATTERN = re.compile(r"^ain_(live|user)_[0-9A-Za-z]{38}$")


def _base62(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, rem = divmod(number, 62)
        chars.append(_ALPHABET[rem])
    return "".join(reversed(chars))


def _checksum(prefix: str, body: str) -> str:
    return _base62(zlib.crc32((prefix + body).encode()), _CHECK_LEN)


def mint(prefix: str) -> str:
    body = "".join(secrets.choice(_ALPHABET) for _ in range(_BODY_LEN))
    return prefix + body + _checksum(prefix, body)


def well_formed(token: str) -> bool:
    """Shape and checksum only; says nothing of whether the token exists."""
    if not TOKEN_PATTERN.match(token):
        return False
    prefix, rest = token[:9], token[9:]
    return _checksum(prefix, rest[:_BODY_LEN]) == rest[_BODY_LEN:]


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


_TOKEN_LEN = len(API_KEY_PREFIX) + _BODY_LEN + _CHECK_LEN
_WELL_FORMED_MAX = 4096
_well_formed_digests: set[str] = set()


def checked_hash(token: str) -> str | None:
    """``hash_token(token)`` if the token is well formed, else None.

    Every request checks its token; the checksum costs four times the hash,
    so the digests of tokens found well formed are remembered (a digest, not
    the secret) and such a token is checked once.
    """
    if len(token) != _TOKEN_LEN or not token.isascii():
        return None
    digest = hash_token(token)
    if digest not in _well_formed_digests:
        if not well_formed(token):
            return None
        if len(_well_formed_digests) >= _WELL_FORMED_MAX:
            _well_formed_digests.clear()
        _well_formed_digests.add(digest)
    return digest
