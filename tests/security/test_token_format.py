"""API keys and user tokens: prefix, ≥128 bits of randomness, a checksum that
turns a mistyped key into a 401 without a database look-up, and the regex the
guide gives to secret scanners."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from escalated.domain import tokens
from tests.conftest import fresh_db
from tests.support.http import Http
from tests.support.server import ServerProcess, start_server

README_REGEX = r"ain_(live|user)_[0-9A-Za-z]{38}"
BASE62 = set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def test_the_guide_gives_the_scanner_regex():
    guide = (Path(__file__).parents[2] / "docs" / "guide.md").read_text()
    assert README_REGEX in guide


def test_every_way_of_minting_gives_the_documented_shape(tmp_path):
    proc = start_server(tmp_path)
    try:
        http = Http(proc.url)
        minted = {
            "bootstrap": proc.bootstrap_key,
            "cli key": proc.cli("keys", "create"),
            "api key": http.post("/api-keys", token=proc.bootstrap_key, json_body={}).json()["key"],
            "user": proc.cli("users", "add", "shape"),
            "rotated user": proc.cli("users", "token", "shape"),
        }
    finally:
        proc.stop()
    for how, token in minted.items():
        assert re.fullmatch(README_REGEX, token), (how, token)
        assert token.startswith("ain_user_" if "user" in how else "ain_live_"), how
        assert tokens.well_formed(token), how


def test_the_random_part_carries_at_least_128_bits():
    """32 base62 characters are 190 bits if every character is uniform; check
    that every position takes every one of the 62 values and nothing repeats."""
    minted = [tokens.mint(tokens.API_KEY_PREFIX) for _ in range(5000)]
    bodies = [t[9:41] for t in minted]
    assert len(set(minted)) == len(minted)
    for position in range(32):
        assert {b[position] for b in bodies} == BASE62, position
    assert 32 * 5.954 >= 128  # log2(62) = 5.954 bits per character


def test_every_single_character_typo_and_adjacent_swap_fails_the_checksum():
    for _ in range(10):
        token = tokens.mint(tokens.API_KEY_PREFIX)
        for i in range(9, len(token)):
            for c in BASE62 - {token[i]}:
                assert not tokens.well_formed(token[:i] + c + token[i + 1 :]), (token, i, c)
            if i + 1 < len(token) and token[i] != token[i + 1]:
                swapped = token[:i] + token[i + 1] + token[i] + token[i + 2 :]
                assert not tokens.well_formed(swapped), (token, i)


@pytest.mark.parametrize(
    "bad",
    ["ain_live_", "ain_live_" + "a" * 37, "ain_live_" + "a" * 39, "ain_test_" + "a" * 38, "AIN_LIVE_" + "a" * 38, "ain_live_" + "a" * 37 + "!"],
)
def test_malformed_shapes_are_not_well_formed(bad):
    assert not tokens.well_formed(bad)


def test_a_mistyped_key_is_401_without_a_database_look_up(request, fn_backend, tmp_path):
    """Hide the key and user tables from the running server: a well-formed
    unknown token now fails inside the look-up (500), while a mistyped one is
    still a clean 401, so it never reached the database."""
    with fresh_db(request, fn_backend, tmp_path) as db:
        _mistyped_key_never_reaches(ServerProcess(db=db).start())


def _execute(db: Path | str, *statements: str) -> None:
    """Statements from another connection, as an operator's shell would."""
    if isinstance(db, str):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)
        return
    with sqlite3.connect(db) as conn:
        for sql in statements:
            conn.execute(sql)


def _mistyped_key_never_reaches(proc: ServerProcess) -> None:
    http = Http(proc.url)
    key = proc.bootstrap_key
    typo = key[:15] + ("x" if key[15] != "x" else "y") + key[16:]
    unknown = tokens.mint(tokens.API_KEY_PREFIX)
    try:
        assert http.get("/escalations", token=key).status == 200
        _execute(proc.db, "ALTER TABLE api_keys RENAME TO api_keys_hidden", "ALTER TABLE users RENAME TO users_hidden")
        try:
            assert http.get("/escalations", token=unknown).status == 500  # the look-up path really is broken now
            for token in (typo, "ain_live_short", "ain_user_" + "0" * 38):
                resp = http.get("/escalations", token=token)
                resp.problem(401, "unauthenticated")
                assert resp.headers["www-authenticate"].startswith("Bearer")
        finally:
            _execute(proc.db, "ALTER TABLE api_keys_hidden RENAME TO api_keys", "ALTER TABLE users_hidden RENAME TO users")
        assert http.get("/escalations", token=key).status == 200
        http.get("/escalations", token=typo).problem(401, "unauthenticated")
    finally:
        proc.stop()
    assert not any(key in line for line in proc.output if "Bootstrap" not in line)
