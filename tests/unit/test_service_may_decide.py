"""``Service.may_decide``: the one rule for who may decide an escalation
(escalations:decide and routed to it), through the real Service and
AdminService on a real SQLite file."""

from __future__ import annotations

import pytest

from escalated.core.admin import AdminService, PolicyRequest
from escalated.core.service import Service
from escalated.domain.scopes import READ
from escalated.errors import InsufficientScope, NotFound
from escalated.core.settings import Settings
from escalated.store.sqlite import SqliteStore
from tests.support.api import escalation_body


@pytest.fixture
async def world(tmp_path):
    """An escalation of policy ``refunds.large``, routed to alice (not bob)."""
    store = await SqliteStore.open(tmp_path / "may-decide.db")
    admin = AdminService(store)
    operator = await admin.operator(workspace="default")
    tokens = {name: await admin.add_user(operator, name=name, role="reviewer", groups=()) for name in ("alice", "bob")}
    await admin.set_policy(operator, request=PolicyRequest(key="refunds.large", reviewers=("alice",)))
    service = Service(store, Settings(db_path=tmp_path / "may-decide.db"))
    esc = await service.get(operator, (await service.create(operator, escalation_body())).escalation.id)

    async def user(name: str):
        return await admin.principal_for(tokens[name])

    async def key(*scopes: str):
        secret, _ = await admin.issue_key(operator, name="reader", scopes=frozenset(scopes), expires_ms=None)
        return await admin.principal_for(secret)

    yield service, esc, user, key
    await store.close()


async def test_a_routed_reviewer_may_decide(world):
    service, esc, user, _ = world
    assert await service.may_decide(await user("alice"), esc) is True


async def test_a_reviewer_the_escalation_is_not_routed_to_may_not_decide(world):
    service, esc, user, _ = world
    assert await service.may_decide(await user("bob"), esc) is False


async def test_a_key_that_sees_every_escalation_but_lacks_the_decide_scope_may_not_decide(world):
    service, esc, _, key = world
    reader = await key(READ)
    assert await service.can_see(reader, esc) is True
    assert await service.may_decide(reader, esc) is False


async def test_decide_refuses_an_unrouted_reviewer_as_not_found_and_changes_nothing(world):
    service, esc, user, _ = world
    with pytest.raises(NotFound):
        await service.decide(await user("bob"), esc, {"choice": "approve"})
    assert (await service.escalation_for_integration(esc.id)).status == "open"


async def test_decide_refuses_a_key_without_the_decide_scope_as_insufficient_scope(world):
    service, esc, _, key = world
    with pytest.raises(InsufficientScope):
        await service.decide(await key(READ), esc, {"choice": "approve"})
    assert (await service.escalation_for_integration(esc.id)).status == "open"
