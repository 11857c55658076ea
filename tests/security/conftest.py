"""The security suite runs against the real ``escalated serve`` subprocess,
once on each backend (``served`` is parametrized by tests/conftest.py's ``backend``).

``Http`` (tests/support/http.py) is the suite's raw stdlib client; it
remembers every response, so a test can scan what the API ever said. Receivers are
tests/support/receiver.py's, real aiohttp servers on port 0.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
import pytest

from tests.support.api import escalation_body
from tests.conftest import fresh_db
from tests.support.http import Http
from tests.support.server import ServerProcess

def create(http: Http, token: str, policy: str, **overrides: Any) -> dict:
    resp = http.post("/escalations", token=token, json_body=escalation_body(policy, **overrides))
    assert resp.status == 201, resp.body
    return resp.json()




@attrs.frozen
class Served:
    proc: ServerProcess
    http: Http
    key: str  # the bootstrap all-scope key of workspace default


@pytest.fixture(scope="module")
def served(request, backend, tmp_path_factory) -> Served:
    """One ``escalated serve`` per module and backend, policy ``sec.open`` (no
    reviewers, no SLA); a failed callback waits an hour for its next attempt."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("sec")) as db:
        args = ("--log-level", "debug", "--retry-schedule", "1h", "--retry-for", "2h")
        proc = ServerProcess(db=db, args=args).start()
        proc.cli("policy", "set", "sec.open")
        yield Served(proc=proc, http=Http(proc.url), key=proc.bootstrap_key)
        proc.kill()  # a clean shutdown is not what these tests are about


def cli_all(proc: ServerProcess, *commands: tuple[str, ...]) -> list[str]:
    """Run independent CLI commands (tests/support/server.py runs them one at a time)."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: proc.cli(*args), commands))
