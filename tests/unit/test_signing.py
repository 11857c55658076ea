"""Callback signatures: v1= + lowercase hex HMAC-SHA256 of the exact bytes."""

from __future__ import annotations

import hashlib
import hmac

from hypothesis import assume, given
from hypothesis import strategies as st

from escalated.agent.signing import sign, verify

BODY = b'{"escalationId":"esc_01","choice":"approve"}'
SECRET = "whsec_test"

# Computed independently of escalated.agent.signing so a wrong key/message order is caught.
KNOWN_VECTOR = "v1=" + hmac.new(b"key", b"The quick brown fox jumps over the lazy dog", hashlib.sha256).hexdigest()


def test_sign_matches_the_well_known_hmac_sha256_example():
    assert KNOWN_VECTOR == "v1=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
    assert sign(b"The quick brown fox jumps over the lazy dog", "key") == KNOWN_VECTOR


def test_signature_is_v1_and_lowercase_hex():
    header = sign(BODY, SECRET)
    version, _, digest = header.partition("=")
    assert version == "v1"
    assert len(digest) == 64 and digest == digest.lower()
    int(digest, 16)


def test_verify_accepts_the_signature_of_the_same_bytes():
    assert verify(BODY, sign(BODY, SECRET), SECRET)


def test_verify_accepts_uppercase_hex_digest():
    assert verify(BODY, "v1=" + sign(BODY, SECRET)[3:].upper(), SECRET)


def test_verify_rejects_reserialised_json_with_the_same_meaning():
    reserialised = b'{"escalationId": "esc_01", "choice": "approve"}'
    assert not verify(reserialised, sign(BODY, SECRET), SECRET)


def test_verify_rejects_a_one_byte_change():
    assert not verify(BODY + b" ", sign(BODY, SECRET), SECRET)


def test_verify_rejects_a_different_secret():
    assert not verify(BODY, sign(BODY, SECRET), SECRET + "x")


def test_verify_rejects_other_versions_and_bare_digests():
    digest = sign(BODY, SECRET)[3:]
    for header in (f"v2={digest}", digest, f"v1={digest[:-1]}", f"v1={digest}0", "v1=", "", "v1"):
        assert not verify(BODY, header, SECRET), header


def test_verify_rejects_an_empty_secret_even_with_its_signature():
    assert not verify(BODY, sign(BODY, ""), "")


def test_verify_is_false_for_a_secret_that_cannot_be_encoded():
    """A str with a lone surrogate is still a str: False, never UnicodeEncodeError."""
    assert verify(BODY, "v1=" + "0" * 64, "\ud800") is False


garbage = st.one_of(
    st.none(), st.text(), st.binary(), st.integers(), st.floats(), st.lists(st.text()), st.dictionaries(st.text(), st.text())
)


@given(body=garbage, header=garbage, secret=garbage)
def test_verify_never_raises_on_arbitrary_input(body, header, secret):
    assert verify(body, header, secret) in (True, False)


@given(header=st.text().map(lambda s: "v1=" + s))
def test_verify_never_raises_on_v1_prefixed_garbage(header):
    assert verify(BODY, header, SECRET) in (True, False)


@given(body=st.binary(), other=st.binary(), secret=st.text(min_size=1))
def test_verify_never_accepts_a_signature_of_different_bytes(body, other, secret):
    if body != other:
        assert not verify(other, sign(body, secret), secret)


@given(body=st.binary(), secret=st.text(min_size=1), other_secret=st.text(min_size=1))
def test_verify_never_accepts_a_different_secret(body, secret, other_secret):
    # HMAC pads short keys with zero bytes, so "k" and "k\0" are the same key:
    # a property of HMAC itself, not a hole in verify.
    assume(secret.rstrip("\0") != other_secret.rstrip("\0"))
    assert not verify(body, sign(body, secret), other_secret)


@given(body=st.binary(), secret=st.text(min_size=1))
def test_sign_then_verify_round_trips(body, secret):
    assert verify(body, sign(body, secret), secret)
