"""API keys and user tokens: format, checksum, hashing (CONTRACT §2)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from escalated.domain import tokens


@pytest.mark.parametrize("prefix", [tokens.API_KEY_PREFIX, tokens.USER_TOKEN_PREFIX])
def test_minted_token_is_prefix_plus_at_least_32_base62(prefix):
    token = tokens.mint(prefix)
    assert re.fullmatch(re.escape(prefix) + r"[0-9A-Za-z]{32,}", token)


def test_api_keys_start_with_ain_live_and_user_tokens_with_ain_user():
    assert tokens.mint(tokens.API_KEY_PREFIX).startswith("ain_live_")
    assert tokens.mint(tokens.USER_TOKEN_PREFIX).startswith("ain_user_")


def test_minted_tokens_are_unique():
    assert len({tokens.mint(tokens.API_KEY_PREFIX) for _ in range(500)}) == 500


@pytest.mark.parametrize("prefix", [tokens.API_KEY_PREFIX, tokens.USER_TOKEN_PREFIX])
def test_minted_token_is_well_formed(prefix):
    assert tokens.well_formed(tokens.mint(prefix))


@given(st.integers(min_value=9, max_value=46), st.sampled_from("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
def test_changing_any_character_after_the_prefix_breaks_the_checksum(position, char):
    token = tokens.mint(tokens.API_KEY_PREFIX)
    changed = token[:position] + char + token[position + 1 :]
    assert tokens.well_formed(changed) == (changed == token)


@pytest.mark.parametrize(
    "text",
    ["", "ain_live_", "ain_live_abc", "ain_test_" + "a" * 38, "Bearer ain_live_" + "a" * 38, "ain_live_" + "-" * 38],
)
def test_malformed_tokens_are_refused(text):
    assert not tokens.well_formed(text)


def test_token_with_the_other_prefix_fails_the_checksum():
    token = tokens.mint(tokens.API_KEY_PREFIX)
    assert not tokens.well_formed(tokens.USER_TOKEN_PREFIX + token.removeprefix(tokens.API_KEY_PREFIX))


def test_hash_is_sha256_hex_and_not_the_token():
    token = tokens.mint(tokens.API_KEY_PREFIX)
    digest = tokens.hash_token(token)
    assert re.fullmatch(r"[0-9a-f]{64}", digest) and token not in digest
    assert tokens.hash_token(token) == digest
    assert tokens.hash_token(tokens.mint(tokens.API_KEY_PREFIX)) != digest


def test_checked_hash_is_the_hash_of_a_well_formed_token_every_time():
    token = tokens.mint(tokens.USER_TOKEN_PREFIX)
    assert tokens.checked_hash(token) == tokens.checked_hash(token) == tokens.hash_token(token)


def test_checked_hash_refuses_what_well_formed_refuses():
    token = tokens.mint(tokens.API_KEY_PREFIX)
    broken = token[:-1] + ("A" if token[-1] != "A" else "B")
    for bad in (broken, token + "x", token[:-1], "ain_live_" + "é" * 38, ""):
        assert tokens.checked_hash(bad) is None
    assert tokens.checked_hash(broken) is None  # a refused token is never remembered as well formed
