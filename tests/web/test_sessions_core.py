"""WebSessions against a real SQLite file: expiry and idle time are arguments, not waits."""

from __future__ import annotations

import pytest

from escalated.domain import tokens
from escalated.errors import Unauthenticated
from escalated.store import admin
from escalated.store.db import connect, run_in_transaction
from escalated.store.sqlite import SqliteStore
from escalated.timeutil import now_ms
from escalated.core.websessions import WebSessions, issue_login_link


@pytest.fixture
async def sessions(tmp_path):
    path = tmp_path / "escalated.db"
    conn = connect(path)
    token = tokens.mint(tokens.USER_TOKEN_PREFIX)

    def setup(conn):
        ws = admin.workspace_by_name(conn, admin.DEFAULT_WORKSPACE)
        admin.insert_user(conn, ws.id, name="alice", role="reviewer", groups=(), token_hash=tokens.hash_token(token))
        return ws.id

    ws_id = run_in_transaction(conn, setup)
    store = await SqliteStore.open(path)
    yield WebSessions(store, idle_s=3600), conn, ws_id, token
    await store.close()
    conn.close()


async def test_a_session_ends_after_its_idle_time(sessions):
    web, _, _, token = sessions
    new = await web.sign_in_with_token(token)
    assert (await web.signed_in(new.secret)).principal.name == "alice"
    assert await web.signed_in(new.secret, at_ms=now_ms() + 3601_000) is None
    assert await web.signed_in(new.secret) is None  # ended, not only skipped


async def test_an_expired_login_link_does_not_sign_in(sessions):
    web, conn, ws_id, _ = sessions
    secret = run_in_transaction(conn, lambda c: issue_login_link(c, ws_id, "alice", ttl_s=60, at_ms=now_ms() - 120_000))
    with pytest.raises(Unauthenticated):
        await web.sign_in_with_link(secret)


async def test_the_csrf_token_differs_per_session(sessions):
    web, _, _, token = sessions
    first, second = await web.sign_in_with_token(token), await web.sign_in_with_token(token)
    assert first.signed_in.csrf != second.signed_in.csrf


async def test_only_hashes_of_session_secrets_are_stored(sessions):
    web, conn, _, token = sessions
    new = await web.sign_in_with_token(token)
    dump = "\n".join(conn.iterdump())
    assert new.secret not in dump and token not in dump
