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
from urllib.parse import urlsplit

import hypothesis
import pytest
import requests
import schemathesis
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from escalated.domain.validation import POLICY_KEY
from tests.support.server import start_server

LONG = os.environ.get("ESCALATED_FUZZ_LONG", "") not in ("", "0")
MAX_EXAMPLES = 400 if LONG else 15
POLICIES = ("fuzz.plain", "fuzz.sla")
STATUSES: Counter = Counter()
# CI is repeatable (fixed hypothesis and steering seeds); the long run explores.
STEER = random.Random(None if LONG else 8)
# Test traffic never leaves this machine. A generated create whose body is
# schema-valid would be accepted, and its callback then POSTed to whatever
# host the generator wrote (``https://0.com``); such a body's resume.url is
# pointed at a closed loopback port instead, so the server's attempts are
# refused locally. A body generated invalid keeps its URL: the server must
# refuse it (negative_data_rejection), so nothing is ever sent to it.
LOCAL_SINK = "http://127.0.0.1:9/resume"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


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
        response = {"response": {"amount": 1, "reason": "a"}} if "responseFields" in body else {}
        requests.post(
            f"{url}/escalations/{esc_id}/decide", json={"choice": "deny", **response}, headers={"Authorization": f"Bearer {key}"}, timeout=10
        )
    elif roll < 0.3:
        requests.post(f"{url}/escalations/{esc_id}/cancel", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    return esc_id


def _throwaway_key(url: str, key: str) -> str:
    resp = requests.post(f"{url}/api-keys", json={"name": "victim"}, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert resp.status_code == 201, resp.text
    return resp.json()["id"]


def _valid_policy_in(body) -> bool:
    """Only a well-formed policy key is swapped for a real one: a malformed one
    is what a negative case tests."""
    return isinstance(body, dict) and isinstance(body.get("policy"), str) and POLICY_KEY.match(body["policy"]) is not None


def _keep_callbacks_local(case) -> None:
    body = case.body
    if not isinstance(body, dict) or not isinstance(body.get("resume"), dict):
        return
    body_info = case.meta.components.get(ParameterLocation.BODY) if case.meta is not None else None
    if body_info is not None and body_info.mode == schemathesis.GenerationMode.NEGATIVE:
        return
    if isinstance(body["resume"].get("url"), str):
        body["resume"]["url"] = LOCAL_SINK


def _steer(case, url: str, key: str, rng: random.Random) -> None:
    _keep_callbacks_local(case)
    path_parameters = case.path_parameters or {}
    if "id" in path_parameters:
        if case.path.startswith("/api-keys"):
            path_parameters["id"] = _throwaway_key(url, key) if rng.random() < 0.5 else path_parameters["id"]
        elif rng.random() < 0.5:
            path_parameters["id"] = _fresh_escalation(url, key, rng)
    if _valid_policy_in(case.body) and rng.random() < 0.5:
        case.body["policy"] = rng.choice(POLICIES)
    if case.path.endswith("/wait"):
        query = case.query if isinstance(case.query, dict) else {}
        try:
            if 0.2 < float(query.get("timeout", 30)) <= 60:  # a valid wait, shortened; an invalid one stays (422 at once)
                query["timeout"] = 0.2
        except (TypeError, ValueError):
            pass  # not a number: the server must answer 422 at once
        case.query = query


# Refusals on meaning, which no schema can state: a schema-valid request
# refused only for these is not a gap in /openapi.json (docs/reliability.md).
MEANING_CODES = frozenset({"unknown_policy", "default_choice_not_offered", "idempotency_key_reused"})


def _on_meaning(error: dict) -> bool:
    field, message = error.get("field", ""), error.get("message", "")
    return (
        message.startswith("duplicate ")  # choice ids, option values, field names
        or (field == "choice" and message.startswith("must be one of"))  # not offered by this escalation
        or field == "response" or field.startswith("response.")  # does not fit this escalation's responseFields
        or field == "resume.url"  # a host refused for where it points (link-local, metadata, ...)
        or field == "expiresIn"  # well formed, but zero or over 100 years (a rule's: over 30 days)
        or field == "user"  # assign: no such user, or not routed to this escalation
    )


def refused_on_meaning(response) -> bool:
    if response.status_code != 422:
        return False
    body = response.json()
    if body.get("code") in MEANING_CODES:
        return True
    errors = body.get("errors") or []
    return bool(errors) and all(_on_meaning(e) for e in errors)


def excluded_for(response, case) -> list:
    """Checks that do not apply to this answer: a refusal on meaning is not a
    schema gap; a 413 (body over the size limit) is a rejection that
    schemathesis' list of rejection statuses leaves out; and a case made
    invalid through its ``Authorization`` header was sent with our valid key
    instead (the security scheme is tested by the auth suites)."""
    excluded = [positive_data_acceptance] if refused_on_meaning(response) else []
    meta = case.meta
    negated_auth = meta is not None and "Authorization" in str(getattr(meta.phase.data, "description", "") or "")
    if response.status_code == 413 or negated_auth:
        excluded.append(negative_data_rejection)
    return excluded


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
    response = case.call(base_url=fuzz_server.url, headers={"Authorization": f"Bearer {fuzz_key}"}, timeout=15)
    STATUSES[response.status_code] += 1
    assert response.status_code < 500
    # Every check, positive_data_acceptance and negative_data_rejection too;
    # only a refusal on meaning is not held against the schema.
    case.validate_response(
        response,
        additional_checks=[problem_json_for_errors],
        excluded_checks=excluded_for(response, case),
    )


def test_stateful_sequences_follow_the_links_without_5xx(api_schema, fuzz_server, fuzz_key):
    """Create → get/acknowledge/decide/cancel/wait/deliveries on the id it
    returned, and so on, along the links schemathesis infers from Location.
    Key revocation is left out so the fuzzer cannot revoke its own key."""
    base = api_schema.exclude(path="/events").exclude(method="DELETE").as_state_machine()
    failures: list[str] = []
    checked = [0]

    class Machine(base):
        def before_call(self, case):
            _keep_callbacks_local(case)
            if case.path.endswith("/wait"):
                case.query = {"timeout": 0.2}
            if _valid_policy_in(case.body):
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
                    excluded_checks=excluded_for(response, case),
                    transport_kwargs=kwargs,
                )
            except Exception as exc:  # every failure is reported below
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


def test_no_callback_target_outside_this_machine(fuzz_server, fuzz_key):
    """Runs after the fuzzing above: every escalation it created points its
    callback at loopback, so the server never sent anything elsewhere."""
    cursor, seen, hosts = None, 0, set()
    while True:
        params = {"limit": 200, **({"cursor": cursor} if cursor else {})}
        page = requests.get(f"{fuzz_server.url}/escalations", params=params, headers={"Authorization": f"Bearer {fuzz_key}"}, timeout=10).json()
        for esc in page["data"]:
            seen += 1
            if esc.get("resume"):
                hosts.add(urlsplit(esc["resume"]["url"]).hostname)
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert seen > 0 and hosts, "the fuzzing created no escalation with a callback: this check would prove nothing"
    assert hosts <= LOOPBACK_HOSTS, hosts
