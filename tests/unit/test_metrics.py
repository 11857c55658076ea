"""A request counted by ``Metrics.request_answered`` reads in ``/metrics`` as
prometheus_client's own ``Counter.inc`` and ``Histogram.observe`` would make it."""

from __future__ import annotations

from prometheus_client import generate_latest

from escalated.core.metrics import Metrics

# On the bounds, between them, below the first and above the last.
DURATIONS = (0.0, 0.0005, 0.001, 0.0010001, 0.0025, 0.003, 0.01, 0.07, 0.25, 0.9999, 1.0, 4.2, 5.0, 5.0001, 600.0)
REQUESTS = [("POST", "/escalations", 201), ("GET", "/escalations/{id}", 404), ("BREW", "/x", 405), ("POST", "/escalations", 201)]


def _exposition(metrics: Metrics) -> list[str]:
    text = generate_latest(metrics.registry).decode()
    # Without the samples of when each child was made (``..._created``).
    return [line for line in text.splitlines() if not line.split("{")[0].split(" ")[0].endswith("_created")]


def _counted(*, public: bool) -> Metrics:
    metrics = Metrics()
    for i, d in enumerate(DURATIONS):
        for method, route, status in REQUESTS[: 1 + i % len(REQUESTS)]:
            metrics.request_answered(method, route, status, duration_s=d)
            if public:  # every child through prometheus_client's own calls from now on
                for children in metrics._request_children.values():
                    children._buckets = None
    return metrics


def test_escalations_created_read_as_prometheus_client_counts_them():
    direct, public = Metrics(), Metrics()
    public._created_value = None
    for metrics in (direct, public):
        for _ in range(3):
            metrics.escalation_created()
    assert direct._created_value is not None
    assert _exposition(direct) == _exposition(public)
    assert "escalated_escalations_created_total 3.0" in _exposition(direct)


def test_requests_read_as_prometheus_client_counts_them():
    direct, public = _counted(public=False), _counted(public=True)
    assert all(c._buckets is not None for c in direct._request_children.values())
    assert _exposition(direct) == _exposition(public)
    assert 'escalated_http_request_seconds_bucket{le="0.001",route="/escalations"} 3.0' in _exposition(direct)
