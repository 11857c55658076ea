"""Store conformance: the web app's sessions and sign-in links, and email
decision links. Only hashes of their secrets are stored; each link works
once. Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from escalated.domain.models import NewDecisionLink
from escalated.errors import ConfigError
from tests.store.make import create, escalation


@pytest.fixture
async def ann(store, ws):
    return await store.add_user(workspace_id=ws, name="ann", role="reviewer", groups=(), token_hash="u-ann")


# -- sessions -------------------------------------------------------------------------


async def test_a_started_session_reads_back_its_user_and_times(store, ann):
    await store.start_session(id_hash="s-1", user_id=ann.id, user_token_hash="u-ann", at_ms=1_000)
    assert await store.session_user(id_hash="s-1") == (ann, 1_000, 1_000)
    assert await store.session_user(id_hash="s-2") is None


async def test_touch_moves_last_seen_only(store, ann):
    await store.start_session(id_hash="s-1", user_id=ann.id, user_token_hash="u-ann", at_ms=1_000)
    await store.touch_session(id_hash="s-1", at_ms=5_000)
    assert await store.session_user(id_hash="s-1") == (ann, 1_000, 5_000)


async def test_an_ended_session_is_gone(store, ann):
    await store.start_session(id_hash="s-1", user_id=ann.id, user_token_hash="u-ann", at_ms=1_000)
    await store.end_session(id_hash="s-1", at_ms=2_000)
    assert await store.session_user(id_hash="s-1") is None


async def test_rotating_the_users_token_ends_its_sessions(store, ws, ann):
    await store.start_session(id_hash="s-1", user_id=ann.id, user_token_hash="u-ann", at_ms=1_000)
    await store.rotate_user_token(workspace_id=ws, name="ann", token_hash="u-ann-new")
    assert await store.session_user(id_hash="s-1") is None


# -- sign-in links ------------------------------------------------------------------------


async def test_a_login_link_is_redeemed_once_and_starts_a_session(store, ws, ann):
    await store.add_login_link(secret_hash="l-1", workspace_id=ws, name="ann", at_ms=1_000, expires_ms=10_000)
    assert await store.redeem_login_link(secret_hash="l-1", session_hash="s-1", at_ms=2_000) == ann
    assert await store.session_user(id_hash="s-1") == (ann, 2_000, 2_000)
    assert await store.redeem_login_link(secret_hash="l-1", session_hash="s-2", at_ms=3_000) is None
    assert await store.session_user(id_hash="s-2") is None


async def test_an_expired_or_unknown_login_link_redeems_nothing(store, ws, ann):
    await store.add_login_link(secret_hash="l-1", workspace_id=ws, name="ann", at_ms=1_000, expires_ms=10_000)
    assert await store.redeem_login_link(secret_hash="l-1", session_hash="s-1", at_ms=10_000) is None
    assert await store.redeem_login_link(secret_hash="l-x", session_hash="s-2", at_ms=2_000) is None
    assert await store.session_user(id_hash="s-1") is None


async def test_a_login_link_dies_with_the_token_it_was_made_under(store, ws, ann):
    await store.add_login_link(secret_hash="l-1", workspace_id=ws, name="ann", at_ms=1_000, expires_ms=10_000)
    await store.rotate_user_token(workspace_id=ws, name="ann", token_hash="u-ann-new")
    assert await store.redeem_login_link(secret_hash="l-1", session_hash="s-1", at_ms=2_000) is None


async def test_a_login_link_for_no_such_user_is_refused(store, ws, ann):
    with pytest.raises(ConfigError):
        await store.add_login_link(secret_hash="l-1", workspace_id=ws, name="nobody", at_ms=1_000, expires_ms=10_000)


# -- email decision links ---------------------------------------------------------------------


@pytest.fixture
async def esc(store, ws):
    made = escalation(ws)
    await create(store, made)
    return made


def link(esc, user, secret_hash: str, choice: str = "approve", expires_ms: int = 10_000) -> NewDecisionLink:
    return NewDecisionLink(secret_hash=secret_hash, escalation_id=esc.id, user_id=user.id, choice=choice, expires_ms=expires_ms)


async def test_a_decision_link_reads_back_with_its_user(store, esc, ann):
    await store.add_decision_links(delivery_id="dlv_1", links=[link(esc, ann, "d-1", "deny")], at_ms=1_000)
    got = await store.decision_link(secret_hash="d-1")
    assert (got.escalation_id, got.choice, got.user, got.created_ms, got.expires_ms) == (esc.id, "deny", ann, 1_000, 10_000)
    assert (got.used_ms, got.replaced_ms) == (None, None)
    assert await store.decision_link(secret_hash="d-x") is None


async def test_a_decision_link_is_used_once(store, esc, ann):
    await store.add_decision_links(delivery_id="dlv_1", links=[link(esc, ann, "d-1")], at_ms=1_000)
    assert await store.use_decision_link(secret_hash="d-1", at_ms=2_000) is True
    assert await store.use_decision_link(secret_hash="d-1", at_ms=2_001) is False
    assert (await store.decision_link(secret_hash="d-1")).used_ms == 2_000


async def test_an_expired_decision_link_cannot_be_used(store, esc, ann):
    await store.add_decision_links(delivery_id="dlv_1", links=[link(esc, ann, "d-1")], at_ms=1_000)
    assert await store.use_decision_link(secret_hash="d-1", at_ms=10_000) is False


async def test_a_later_attempts_links_replace_the_earlier_unused_ones_of_the_same_delivery(store, esc, ann):
    await store.add_decision_links(delivery_id="dlv_1", links=[link(esc, ann, "d-1"), link(esc, ann, "d-2")], at_ms=1_000)
    await store.add_decision_links(delivery_id="dlv_2", links=[link(esc, ann, "e-1")], at_ms=1_000)
    await store.use_decision_link(secret_hash="d-2", at_ms=1_500)
    await store.add_decision_links(delivery_id="dlv_1", links=[link(esc, ann, "d-3")], at_ms=2_000)
    replaced = await store.decision_link(secret_hash="d-1")
    assert replaced.replaced_ms == 2_000 and await store.use_decision_link(secret_hash="d-1", at_ms=2_500) is False
    assert (await store.decision_link(secret_hash="d-2")).replaced_ms is None  # used before: stays as it was
    assert await store.use_decision_link(secret_hash="e-1", at_ms=2_500) is True  # another delivery's
    assert await store.use_decision_link(secret_hash="d-3", at_ms=2_500) is True
