"""The CLI's data commands on a postgresql:// URL act on replicas already
running, through the real surface: a real ``escalated serve`` on the URL,
the real CLI in another process, real HTTP."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from tests.support.server import ServerProcess, cli
from tests.support.wait import eventually

pytestmark = pytest.mark.postgres

# A replica keeps keys, users and policies for at most 1 s (CONTRACT, #14 additions).
CONFIG_BOUND_S = 1.0


def status_of(url: str, token: str) -> int:
    req = urllib.request.Request(f"{url}/escalations", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            json.loads(resp.read())
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def until(check, *, timeout_s: float, what: str) -> float:
    """Seconds until ``check()`` holds; fails at the deadline."""
    start = time.monotonic()
    eventually(check, timeout_s=timeout_s, what=what)
    return time.monotonic() - start


@pytest.fixture
def replica(postgres_url):
    proc = ServerProcess(db=postgres_url).start()
    yield proc
    proc.stop()


def test_a_key_made_with_the_cli_on_the_url_works_on_a_running_replica(replica, postgres_url):
    key = cli(postgres_url, "keys", "create", "--name", "cli-made")
    assert status_of(replica.url, key) == 200


def test_a_key_revoked_with_the_cli_on_the_url_is_refused_by_a_running_replica_within_its_bound(replica, postgres_url):
    key = cli(postgres_url, "keys", "create")
    assert status_of(replica.url, key) == 200  # now the replica holds it
    key_id = cli(postgres_url, "keys", "list").splitlines()[-1].split("\t")[0]
    cli(postgres_url, "keys", "revoke", key_id)
    waited_s = until(lambda: status_of(replica.url, key) == 401, timeout_s=10, what="the revoked key to be refused")
    assert waited_s < CONFIG_BOUND_S + 0.5
