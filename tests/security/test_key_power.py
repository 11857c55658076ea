"""No key can mint or keep more power than it was given (CONTRACT §2).

Single cases of "a wider request is 403", revoked keys on every route and an
already-expired key are in tests/integration/test_auth_api_keys.py and
test_auth_scopes.py. Here: every (caller scopes, requested scopes) pair, the
minted key's real power, chains of minting, and revocation, expiry and
token rotation taking effect on a running server at once.
"""

from __future__ import annotations

import itertools

import attrs
import pytest

from escalated.domain.scopes import ALL_SCOPES
from tests.conftest import fresh_db
from tests.integration.conftest import LiveServer
from tests.security.conftest import Served, create
from tests.support.http import Http
from tests.support.wait import eventually

SUBSETS = [frozenset(c) for n in range(1, 6) for c in itertools.combinations(ALL_SCOPES, n)]


@attrs.frozen
class Clocked:
    """The real app in process on a clock the test moves (``live.advance``),
    for expiry: a key's hours pass at once instead of its seconds in real time."""

    live: LiveServer
    http: Http
    key: str


@pytest.fixture(scope="module")
def clocked(request, backend, tmp_path_factory) -> Clocked:
    with fresh_db(request, backend, tmp_path_factory.mktemp("clocked")) as db:
        live = LiveServer(db).start()
        yield Clocked(live=live, http=live.api, key=live.key(name="bootstrap"))
        live.stop()


def mint(served: Served | Clocked, token: str, **body) -> tuple[int, dict]:
    resp = served.http.post("/api-keys", token=token, json_body=body)
    return resp.status, resp.json()


@pytest.fixture(scope="module")
def keys_by_scopes(served) -> dict[frozenset, str]:
    """One key for each of the 31 non-empty scope sets, minted by the bootstrap key."""
    out = {}
    for scopes in SUBSETS:
        status, body = mint(served, served.key, scopes=sorted(scopes))
        assert status == 201, body
        out[scopes] = body["key"]
    return out


@pytest.mark.parametrize("caller", SUBSETS, ids=lambda s: "+".join(sorted(x.split(":")[1] for x in s)))
def test_a_key_may_mint_exactly_the_subsets_of_its_own_scopes(served, keys_by_scopes, caller):
    for requested in SUBSETS:
        status, body = mint(served, keys_by_scopes[caller], scopes=sorted(requested))
        if requested <= caller:
            assert status == 201, body
            assert set(body["scopes"]) == requested
        else:
            assert status == 403 and body["code"] == "insufficient_scope", (caller, requested, body)


def test_a_minted_key_has_the_power_it_lists_and_no_more(served):
    status, body = mint(served, served.key, scopes=["escalations:read"])
    assert status == 201
    reader = body["key"]
    esc = create(served.http, served.key, "sec.open")
    assert served.http.get(f"/escalations/{esc['id']}", token=reader).status == 200
    assert served.http.post(f"/escalations/{esc['id']}/decide", token=reader, json_body={"choice": "approve"}).status == 403
    assert served.http.post("/escalations", token=reader, json_body={}).status == 403


def test_a_chain_of_minting_only_narrows(served):
    status, body = mint(served, served.key, scopes=["escalations:read", "escalations:decide"])
    assert status == 201
    child = body["key"]
    status, body = mint(served, child)  # omitted scopes: the caller's own
    assert status == 201 and set(body["scopes"]) == {"escalations:read", "escalations:decide"}
    grandchild = body["key"]
    status, body = mint(served, grandchild, scopes=["escalations:read"])
    assert status == 201
    great = body["key"]
    for token in (child, grandchild, great):
        status, body = mint(served, token, scopes=list(ALL_SCOPES))
        assert status == 403, body
    status, body = mint(served, great, scopes=["escalations:decide"])
    assert status == 403, body


def test_a_narrow_key_cannot_revoke_a_wider_one(served):
    _, wide = mint(served, served.key)
    _, narrow = mint(served, served.key, scopes=["escalations:read"])
    resp = served.http.request("DELETE", f"/api-keys/{wide['id']}", token=narrow["key"])
    assert resp.problem(403, "insufficient_scope")
    assert served.http.get("/escalations", token=wide["key"]).status == 200


def test_a_reviewer_token_cannot_mint_a_key_at_all(served):
    reviewer = served.proc.cli("users", "add", "minting-reviewer")
    status, body = mint(served, reviewer, scopes=["escalations:read"])
    assert status == 403, body


def refused_as_the_contract_says(served: Served, token: str) -> None:
    """A change made by another process (the CLI) reaches the running server: on SQLite by the next
    request, on PostgreSQL within 1 s (docs/CONTRACT.md: its commit's NOTIFY, usually milliseconds;
    the cached row's 1 s at worst). The CLI here runs in the test's process and returns the moment it
    committed, before the notification can have arrived, so PostgreSQL is given the contract's second
    (and as much again for a loaded machine's request)."""
    refused = lambda: served.http.get("/escalations", token=token).status == 401  # noqa: E731
    if str(served.proc.db).startswith("postgresql:"):
        eventually(refused, timeout_s=2.0, interval_s=0.02, what="the running server to refuse the token")
    served.http.get("/escalations", token=token).problem(401, "unauthenticated")


def test_a_key_revoked_by_the_cli_is_refused_by_the_running_server_at_once(served):
    _, body = mint(served, served.key, name="to-revoke")
    assert served.http.get("/escalations", token=body["key"]).status == 200
    served.proc.cli("keys", "revoke", body["id"])
    refused_as_the_contract_says(served, body["key"])


def test_a_key_stops_working_when_it_expires_without_a_restart(clocked):
    status, body = mint(clocked, clocked.key, expiresIn="1h")
    assert status == 201 and body["expiresAt"]
    assert clocked.http.get("/escalations", token=body["key"]).status == 200
    clocked.live.advance(3599)
    assert clocked.http.get("/escalations", token=body["key"]).status == 200
    clocked.live.advance(2)  # past its hour, on the running server's clock
    clocked.http.get("/escalations", token=body["key"]).problem(401, "unauthenticated")


def test_a_rotated_user_token_is_refused_at_once(served):
    old = served.proc.cli("users", "add", "rotating")
    assert served.http.get("/escalations", token=old).status == 200
    new = served.proc.cli("users", "token", "rotating")
    refused_as_the_contract_says(served, old)
    assert served.http.get("/escalations", token=new).status == 200


def test_a_key_minted_without_expiry_by_an_expiring_key_dies_with_it(clocked):
    _, parent = mint(clocked, clocked.key, expiresIn="1h")
    status, child = mint(clocked, parent["key"])
    assert status == 201, child
    assert child["expiresAt"] == parent["expiresAt"]
    assert clocked.http.get("/escalations", token=child["key"]).status == 200
    clocked.live.advance(3601)  # past the parent's hour
    clocked.http.get("/escalations", token=child["key"]).problem(401, "unauthenticated")


def test_a_key_asking_to_outlive_its_issuer_gets_the_issuers_expiry(served):
    _, parent = mint(served, served.key, expiresIn="1h")
    status, child = mint(served, parent["key"], expiresIn="3650d")
    assert status == 201, child
    assert child["expiresAt"] == parent["expiresAt"]
    listed = {k["id"]: k for k in served.http.get("/api-keys", token=served.key).json()["data"]}
    assert listed[child["id"]]["expiresAt"] == parent["expiresAt"]


def test_a_key_asking_for_less_than_its_issuer_keeps_its_shorter_expiry(served):
    _, parent = mint(served, served.key, expiresIn="1h")
    status, child = mint(served, parent["key"], expiresIn="10m")
    assert status == 201, child
    assert child["expiresAt"] < parent["expiresAt"]
