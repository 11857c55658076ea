"""One real ``escalated serve`` per module and backend, with an admin, two reviewers and policies."""

from __future__ import annotations

import attrs
import pytest

from tests.conftest import fresh_db
from tests.support.server import ServerProcess

RESUME_SECRET = "resume-secret-never-shown-0123456789"


@attrs.frozen
class World:
    server: ServerProcess
    key: str  # the bootstrap API key: the agent
    admin: str  # user tokens
    alice: str
    bob: str

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def world(request, backend, tmp_path_factory) -> World:
    with fresh_db(request, backend, tmp_path_factory.mktemp("web")) as db:
        # Every test of a module signs in from 127.0.0.1 within seconds: the
        # per-address sign-in limit (tested in test_throttling.py) is off here.
        yield from _world(ServerProcess(db=db, args=("--sign-in-rate-limit", "off")).start())


def _world(server: ServerProcess):
    try:
        admin = server.cli("users", "add", "root", "--role", "admin")
        alice = server.cli("users", "add", "alice", "--group", "finance")
        bob = server.cli("users", "add", "bob")
        server.cli("policy", "set", "refunds", "--reviewer", "group:finance")
        server.cli("policy", "set", "everyone")
        yield World(server=server, key=server.bootstrap_key, admin=admin, alice=alice, bob=bob)
    finally:
        server.stop()
