"""The sender on a PostgreSQL store: claims through the real writer."""

from __future__ import annotations

import psycopg
import pytest

from escalated.core.service import Service
from escalated.domain.models import Principal
from escalated.domain.policies import build_policy
from escalated.domain.scopes import ALL_SCOPES
from escalated.engine.sender import Sender
from escalated.core.metrics import Metrics
from escalated.core.settings import PostgresUrl, Settings
from escalated.store.postgres.store import PostgresStore
from tests.support.api import escalation_body

pytestmark = pytest.mark.postgres


async def test_a_claim_that_cannot_be_written_leaves_the_delivery_pending_without_an_error(postgres_url):
    store = await PostgresStore.open(postgres_url)
    ws = await store.workspace_by_name(name="default")
    await store.put_policy(policy=build_policy(ws.id, "refunds.large"))
    service = Service(store, Settings(db_path=PostgresUrl(postgres_url)))
    principal = Principal(kind="key", id="key_test", name="test", workspace_id=ws.id, scopes=frozenset(ALL_SCOPES))
    body = escalation_body(resume={"mode": "webhook", "url": "http://127.0.0.1:9/resume"})
    esc = await service.get(principal, (await service.create(principal, body)).escalation.id)
    await service.decide(principal, esc, {"choice": "approve"})
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as admin:
        # The writer's connection dies: its next group (the claim) fails as busy.
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'COMMIT%%'"
        )
    async with Sender(service, metrics=Metrics()) as sender:
        started = await sender.drain()
    (delivery,) = await store.deliveries_of(escalation_id=esc.id)
    await store.close()
    assert started == 1
    assert delivery.status == "pending" and delivery.attempts == ()
