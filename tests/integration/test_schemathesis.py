"""schemathesis against ``/openapi.json`` of a real ``escalated serve``, with a
valid key, across every route: no 5xx, every error problem+json, every
response matching the documented schema (all of schemathesis' checks).

Generated cases are steered towards the interesting parts: half the path ids
are real, fresh escalations (so decide/cancel/acknowledge bodies reach the
validation of a live escalation instead of a 404), half the create bodies
name an existing policy, and ``wait`` never blocks longer than 0.2 s.
``/events`` (an endless stream) is excluded; its 401/403 are tested elsewhere.

``ESCALATED_FUZZ_LONG=1`` raises the example count per route.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import hypothesis
import pytest
import requests
import schemathesis
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from tests.support.server import start_server

LONG = os.environ.get("ESCALATED_FUZZ_LONG", "") not in ("", "0")
MAX_EXAMPLES = 400 if LONG else 15
POLICIES = ("fuzz.plain", "fuzz.sla")
STATUSES: Counter = Counter()
LENIENT = (ParameterLocation.QUERY, ParameterLocation.HEADER)
# CI is repeatable (fixed hypothesis and steering seeds); the long run explores.
STEER = random.Random(None if LONG else 8)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    proc = start_server(tmp_path_factory.mktemp("fuzz"), "--log-level", "warning")
    proc.cli("policy", "set", "fuzz.plain")
    proc.cli("policy", "set", "fuzz.sla", "--sla", "1h", "--default-choice", "deny")
    yield proc
    proc.stop()
    server_errors = [line for line in proc.output if "internal error" in line or "Traceback" in line]
    fives = sum(n for status, n in STATUSES.items() if status >= 500)
    print(f"\nschemathesis: {sum(STATUSES.values())} responses checked, {fives} server errors; by status {dict(sorted(STATUSES.items()))}")
    assert not server_errors, "".join(proc.output[-200:])


@pytest.fixture(scope="module")
def fuzz_key(fuzz_server) -> str:
    """The key the fuzzer uses; no generated case may revoke it (it is never a target)."""
    return fuzz_server.cli("keys", "create", "--name", "fuzzer")


@pytest.fixture(scope="module")
def api_schema(fuzz_server):
    return schemathesis.openapi.from_url(fuzz_server.url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


def _fresh_escalation(url: str, key: str, rng: random.Random) -> str:
    body = {
        "policy": rng.choice(POLICIES),
        "agentId": "fuzz",
        "runId": f"run-{rng.randrange(10**9)}",
        "subject": {"type": "t", "id": "1", "label": "l"},
        "question": "q",
        "evidence": [],
        "choices": [{"id": "approve", "label": "A"}, {"id": "deny", "label": "D"}],
    }
    if rng.random() < 0.5:
        body["responseFields"] = [
            {"type": "number", "name": "amount", "label": "Amount", "min": 0, "step": 0.5},
            {"type": "select", "name": "reason", "label": "Reason", "options": [{"value": "a", "label": "A"}]},
        ]
    resp = requests.post(f"{url}/escalations", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert resp.status_code == 201, resp.text
    esc_id = resp.json()["id"]
    roll = rng.random()
    if roll < 0.2:  # some already resolved: retry, deliveries and 409s get real material
        requests.post(f"{url}/escalations/{esc_id}/decide", json={"choice": "deny", **({"response": {"amount": 1, "reason": "a"}} if "responseFields" in body else {})}, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    elif roll < 0.3:
        requests.post(f"{url}/escalations/{esc_id}/cancel", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    return esc_id


def _throwaway_key(url: str, key: str) -> str:
    resp = requests.post(f"{url}/api-keys", json={"name": "victim"}, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert resp.status_code == 201, resp.text
    return resp.json()["id"]


def _steer(case, url: str, key: str, rng: random.Random) -> None:
    path_parameters = case.path_parameters or {}
    if "id" in path_parameters:
        if case.path.startswith("/api-keys"):
            path_parameters["id"] = _throwaway_key(url, key) if rng.random() < 0.5 else path_parameters["id"]
        elif rng.random() < 0.5:
            path_parameters["id"] = _fresh_escalation(url, key, rng)
    if isinstance(case.body, dict) and "policy" in case.body and rng.random() < 0.5:
        case.body["policy"] = rng.choice(POLICIES)
    if case.path.endswith("/wait"):
        query = case.query if isinstance(case.query, dict) else {}
        try:
            if float(query.get("timeout", 30)) > 0.2:
                query["timeout"] = 0.2
        except (TypeError, ValueError):
            pass  # not a number: the server must answer 422 at once
        case.query = query


def problem_json_for_errors(ctx, response, case):
    """Every error is application/problem+json whose ``status`` is the HTTP status."""
    if response.status_code < 400:
        return None
    content_type = response.headers.get("content-type", [""])
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    assert content_type.startswith("application/problem+json"), f"{response.status_code} with {content_type}"
    body = response.json()
    assert body["status"] == response.status_code and isinstance(body["code"], str) and body["title"], body
    return None


@schema.exclude(path="/events").parametrize()
@hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=not LONG,
)
def test_every_route_answers_within_its_schema_and_never_5xx(case, fuzz_server, fuzz_key):
    _steer(case, fuzz_server.url, fuzz_key, STEER)
    excluded = [positive_data_acceptance]
    meta = case.meta
    if meta is not None and any(meta.is_negative_at(where) for where in LENIENT):
        # Query strings are lenient on purpose (unknown names are ignored, an
        # empty ``status=`` means any status; bad values of known names are 422),
        # and our valid Authorization replaces whatever header was generated.
        excluded.append(negative_data_rejection)
    response = case.call_and_validate(
        base_url=fuzz_server.url,
        headers={"Authorization": f"Bearer {fuzz_key}"},
        additional_checks=[problem_json_for_errors],
        # A schema-valid body may still be refused on meaning (unknown policy,
        # a choice not offered, a response not matching responseFields): 422.
        excluded_checks=excluded,
        timeout=15,
    )
    STATUSES[response.status_code] += 1
    assert response.status_code < 500


def test_stateful_sequences_follow_the_links_without_5xx(api_schema, fuzz_server, fuzz_key):
    """Create → get/acknowledge/decide/cancel/wait/deliveries on the id it
    returned, and so on, along the links schemathesis infers from Location.
    Key revocation is left out so the fuzzer cannot revoke its own key."""
    base = api_schema.exclude(path="/events").exclude(method="DELETE").as_state_machine()
    failures: list[str] = []
    checked = [0]

    class Machine(base):
        def before_call(self, case):
            if case.path.endswith("/wait"):
                case.query = {"timeout": 0.2}
            if isinstance(case.body, dict) and "policy" in case.body:
                case.body["policy"] = "fuzz.plain"

        def get_call_kwargs(self, case):
            return {"base_url": fuzz_server.url, "headers": {"Authorization": f"Bearer {fuzz_key}"}, "timeout": 15}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            # Failures are collected, not raised: hypothesis would replay the
            # sequence to report it, and a live server can not be replayed.
            STATUSES[response.status_code] += 1
            checked[0] += 1
            try:
                assert response.status_code < 500, response.text
                problem_json_for_errors(None, response, case)
                case.validate_response(
                    response,
                    additional_checks=additional_checks,
                    excluded_checks=[positive_data_acceptance, negative_data_rejection],
                    transport_kwargs=kwargs,
                )
            except Exception as exc:  # noqa: BLE001 - every failure is reported below
                failures.append(f"{case.method} {case.formatted_path}: {exc}"[:3000])

    settings = hypothesis.settings(
        max_examples=200 if LONG else 10,
        stateful_step_count=10,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
        derandomize=not LONG,
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.reuse, hypothesis.Phase.generate],  # no shrinking
    )
    try:
        Machine.run(settings=settings)
    except hypothesis.errors.FlakyStrategyDefinition:
        # Links draw from live responses, so hypothesis may notice that a
        # prefix it saw before now generates differently and stop early.
        # Every response up to there was checked; failures are in the list.
        pass
    assert checked[0] >= 50, f"only {checked[0]} steps ran"
    assert not failures, f"{len(failures)} failures, the first: " + "\n\n".join(failures[:3])
