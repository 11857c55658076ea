"""End to end: the real ``escalated`` program in subprocesses, a real ``serve``, real HTTP."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from escalated.timeutil import parse_timestamp_ms
from tests.support.server import ServerProcess, start_server

KEY = re.compile(r"^ain_live_[0-9A-Za-z]{32,}$")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> ServerProcess:
    proc = start_server(tmp_path_factory.mktemp("e2e"))
    yield proc
    proc.stop()


def http(url: str, method: str = "GET", *, token: str | None = None, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def create_body(policy: str) -> dict:
    return {
        "policy": policy,
        "agentId": "e2e-agent",
        "runId": "e2e-run",
        "subject": {"type": "order", "id": "1", "label": "Order 1"},
        "question": "Refund?",
        "evidence": [],
        "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
    }


def test_serve_prints_a_working_bootstrap_key_on_a_new_database(served):
    assert served.bootstrap_key and KEY.match(served.bootstrap_key)
    assert http(f"{served.url}/escalations", token=served.bootstrap_key)[0] == 200


def test_key_from_keys_create_in_a_shell_substitution_works(served):
    out = subprocess.run(
        ["sh", "-c", f'KEY=$("{sys.executable}" -m escalated keys create --name shell) && printf %s "$KEY"'],
        env={**os.environ, "ESCALATED_DB": str(served.db)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert KEY.match(out)
    assert http(f"{served.url}/escalations", token=out)[0] == 200


def test_policy_set_via_cli_applies_to_the_next_create_without_restart(served):
    served.cli("policy", "set", "e2e.sla", "--sla", "10m", "--default-choice", "deny")
    status, first = http(f"{served.url}/escalations", "POST", token=served.bootstrap_key, body=create_body("e2e.sla"))
    assert status == 201
    served.cli("policy", "set", "e2e.sla", "--sla", "3h", "--default-choice", "deny")
    _, second = http(f"{served.url}/escalations", "POST", token=served.bootstrap_key, body=create_body("e2e.sla"))
    deltas = [parse_timestamp_ms(e["deadlineAt"]) - parse_timestamp_ms(e["createdAt"]) for e in (first, second)]
    assert deltas == [10 * 60_000, 3 * 3600_000]


def test_users_token_rotation_via_cli_stops_the_old_token(served):
    old = served.cli("users", "add", "rita")
    assert http(f"{served.url}/escalations", token=old)[0] == 200
    new = served.cli("users", "token", "rita")
    status, problem = http(f"{served.url}/escalations", token=old)
    assert status == 401 and problem["code"] == "unauthenticated"
    assert http(f"{served.url}/escalations", token=new)[0] == 200


def test_keys_revoke_via_cli_stops_the_key(served):
    key = served.cli("keys", "create", "--name", "to-revoke")
    key_id = next(line.split("\t")[0] for line in served.cli("keys", "list").splitlines() if "\tto-revoke\t" in line)
    assert http(f"{served.url}/escalations", token=key)[0] == 200  # known to the server (and its caches) first
    served.cli("keys", "revoke", key_id)
    assert http(f"{served.url}/escalations", token=key)[0] == 401


def test_cli_error_exits_non_zero_with_a_message_and_no_traceback(served):
    proc = subprocess.run(
        [sys.executable, "-m", "escalated", "policy", "set", "Not A Key", "--db", str(served.db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "Error" in proc.stderr and "Not A Key" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_restart_does_not_print_a_second_bootstrap_key(tmp_path):
    proc = start_server(tmp_path)
    try:
        first = proc.bootstrap_key
        proc.bootstrap_key = None
        proc.restart()
        assert first and proc.bootstrap_key is None
        assert http(f"{proc.url}/escalations", token=first)[0] == 200
    finally:
        proc.stop()


def test_no_bootstrap_key_when_the_default_workspace_already_has_one(tmp_path):
    from tests.support.server import cli

    db = tmp_path / "escalated.db"
    key = cli(db, "keys", "create")
    proc = start_server(tmp_path)
    try:
        assert proc.bootstrap_key is None
        assert not any("ain_live_" in line for line in proc.output)
        assert http(f"{proc.url}/escalations", token=key)[0] == 200
    finally:
        proc.stop()
