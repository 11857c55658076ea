"""CONTRACT §3: the unauthenticated routes /healthz and /metrics."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def sample(text: str, name: str, labels: dict | None = None) -> float:
    total = 0.0
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in (labels or {}).items()):
                total += s.value
    return total


def test_healthz_is_ok_without_a_token(api):
    resp = api.get("/healthz")
    assert resp.status == 200 and resp.json() == {"status": "ok"}


def test_metrics_is_prometheus_text_without_a_token(api):
    resp = api.get("/metrics")
    assert resp.status == 200
    assert resp.content_type == "text/plain"
    families = {f.name for f in text_string_to_metric_families(resp.body.decode())}
    assert "escalated_escalations_created" in families


def test_created_counter_moves_after_a_create(live, api, admin_key):
    before = sample(api.get("/metrics").body.decode(), "escalated_escalations_created_total")
    live.create(admin_key)
    after = sample(api.get("/metrics").body.decode(), "escalated_escalations_created_total")
    assert after == before + 1


def test_resolved_counter_moves_after_a_decide(live, api, admin_key):
    name, labels = "escalated_escalations_resolved_total", {"resolved_by": "human"}
    before = sample(api.get("/metrics").body.decode(), name, labels)
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/decide", token=admin_key, json_body={"choice": "approve"})
    assert sample(api.get("/metrics").body.decode(), name, labels) == before + 1


def test_http_request_counter_counts_errors_by_status(api):
    name, labels = "escalated_http_requests_total", {"status": "401"}
    before = sample(api.get("/metrics").body.decode(), name, labels)
    api.get("/escalations")
    assert sample(api.get("/metrics").body.decode(), name, labels) == before + 1


def test_rejected_create_does_not_count_as_created(live, api, admin_key):
    before = sample(api.get("/metrics").body.decode(), "escalated_escalations_created_total")
    api.post("/escalations", token=admin_key, json_body={"policy": "refunds.large"})
    assert sample(api.get("/metrics").body.decode(), "escalated_escalations_created_total") == before


def test_made_up_methods_share_one_metrics_label(api):
    # The client chooses the method name; each one must not become a new series.
    # (The HTTP parser refuses names it does not know; these WebDAV ones it accepts.)
    for method in ("PROPFIND", "MKCOL", "PURGE"):
        api.request(method, "/escalations")
    text = api.get("/metrics").body.decode()
    methods = {
        s.labels["method"]
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "escalated_http_requests_total"
    }
    assert methods.isdisjoint({"PROPFIND", "MKCOL", "PURGE"})
    assert sample(text, "escalated_http_requests_total", {"method": "other"}) >= 3
