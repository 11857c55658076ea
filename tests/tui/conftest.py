"""The reviewer TUI against a real ``escalated serve`` subprocess.

``alice`` reviews ``refunds.large`` (15 min SLA), ``refunds.small`` (through
her group) and ``quick.breach`` (2 s SLA); ``bob`` reviews ``ops.other``. The
agent side creates escalations with the bootstrap API key over HTTP; the
app runs as alice with her user token. Nothing of ours is faked.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs
import pytest

from escalated.agent.client import EscalatedClient
from escalated.tui.app import ReviewApp
from tests.support.server import ServerProcess, start_server

REFUND_FIELDS = [
    {"type": "number", "name": "amount", "label": "Refund (EUR)", "min": 0, "step": 0.5},
    {
        "type": "select",
        "name": "reasonCode",
        "label": "Reason code",
        "options": [{"value": "damaged", "label": "Damaged"}, {"value": "late", "label": "Late"}],
    },
]


@attrs.frozen
class Setup:
    server: ServerProcess
    alice_token: str

    def app(self, *, token: str | None = None, **options) -> tuple[ReviewApp, EscalatedClient]:
        client = EscalatedClient(self.server.url, token or self.alice_token)
        return ReviewApp(client, **{"poll_interval_s": 0.5, **options}), client

    def agent(self) -> EscalatedClient:
        assert self.server.bootstrap_key
        return EscalatedClient(self.server.url, self.server.bootstrap_key)


def prepare(server: ServerProcess) -> Setup:
    alice = server.cli("users", "add", "alice", "--group", "finance")
    server.cli("users", "add", "bob")
    server.cli("policy", "set", "refunds.large", "--sla", "15m", "--default-choice", "deny", "--reviewer", "alice")
    server.cli("policy", "set", "refunds.small", "--reviewer", "group:finance")
    server.cli("policy", "set", "quick.breach", "--sla", "2s", "--default-choice", "deny", "--reviewer", "alice")
    server.cli("policy", "set", "ops.other", "--reviewer", "bob")
    return Setup(server=server, alice_token=alice)


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Setup:
    """One server per module: starting one costs seconds, and tests only add data."""
    server = start_server(tmp_path_factory.mktemp("tui"))
    yield prepare(server)
    server.stop()


@pytest.fixture
async def setup(shared: Setup) -> Setup:
    """The shared server with an empty open view: leftovers are cancelled afterwards."""
    yield shared
    async with shared.agent() as agent:
        for status in ("open", "acknowledged"):
            for escalation in (await agent.list_escalations(status=status, limit=100))["data"]:
                await agent.cancel(escalation["id"], reason="test cleanup")


@pytest.fixture
def own_setup(fresh_server: ServerProcess) -> Setup:
    """A server of its own, for tests that stop it."""
    return prepare(fresh_server)


async def create(agent: EscalatedClient, *, policy: str = "refunds.large", label: str = "Order #981", **extra) -> dict:
    return await agent.create_escalation(
        policy=policy,
        agent_id="billing-agent",
        run_id=f"run-{label}",
        subject={"type": "order", "id": label, "label": label},
        question=f"Refund {label}?",
        evidence=["customer since 2019"],
        choices=[{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
        **extra,
    )


async def wait_until(pilot, predicate: Callable[[], object], *, timeout_s: float = 5.0, what: str = "") -> None:
    """Let the app run until ``predicate()`` is true; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.05)


async def server_state(client: EscalatedClient, escalation_id: str, predicate, *, timeout_s: float = 5.0) -> dict:
    """Poll the server until the escalation satisfies ``predicate``; return it."""
    deadline = time.monotonic() + timeout_s
    while True:
        escalation = await client.get_escalation(escalation_id)
        if predicate(escalation) or time.monotonic() > deadline:
            return escalation
        await _pause()


async def _pause() -> None:
    import asyncio

    await asyncio.sleep(0.05)
