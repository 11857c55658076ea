"""WebSessions against a real SQLite file: expiry and idle time are arguments, not waits."""

from __future__ import annotations

import pytest

from escalated.core.admin import AdminService
from escalated.core.websessions import WebSessions
from escalated.domain.models import DEFAULT_WORKSPACE
from escalated.errors import Unauthenticated
from escalated.store.sqlite.db import connect
from escalated.store.sqlite import SqliteStore
from escalated.timeutil import now_ms


@pytest.fixture
async def sessions(tmp_path):
    path = tmp_path / "escalated.db"
    store = await SqliteStore.open(path)
    admin = AdminService(store)
    operator = await admin.operator(workspace=DEFAULT_WORKSPACE)
    token = await admin.add_user(operator, name="alice", role="reviewer", groups=())
    conn = connect(path)
    yield WebSessions(store, idle_s=3600), conn, operator.workspace_id, token
    await store.close()
    conn.close()


async def test_a_session_ends_after_its_idle_time(sessions):
    web, _, _, token = sessions
    new = await web.sign_in_with_token(token)
    assert (await web.signed_in(new.secret)).principal.name == "alice"
    assert await web.signed_in(new.secret, at_ms=now_ms() + 3601_000) is None
    assert await web.signed_in(new.secret) is None  # ended, not only skipped


async def test_an_expired_login_link_does_not_sign_in(sessions):
    web, _, ws_id, _ = sessions
    secret = await web.add_login_link(ws_id, "alice", ttl_s=60, at_ms=now_ms() - 120_000)
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


async def test_a_session_ends_its_lifetime_after_sign_in_however_active(tmp_path):
    store = await SqliteStore.open(tmp_path / "escalated.db")
    try:
        admin = AdminService(store)
        operator = await admin.operator(workspace=DEFAULT_WORKSPACE)
        token = await admin.add_user(operator, name="alice", role="reviewer", groups=())
        web = WebSessions(store, idle_s=600, lifetime_s=3600)
        new = await web.sign_in_with_token(token)
        start = now_ms()
        for minutes in range(5, 60, 5):  # a request every 5 minutes: never idle
            assert await web.signed_in(new.secret, at_ms=start + minutes * 60_000) is not None, minutes
        assert await web.signed_in(new.secret, at_ms=start + 3601_000) is None
        assert await web.signed_in(new.secret) is None  # ended, not only skipped
    finally:
        await store.close()
