"""Prometheus metrics, one registry per server so tests do not collide."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_RequestKey = tuple[str, str, int]  # method, route, status


_STANDARD_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.http_requests = Counter(
            "escalated_http_requests", "HTTP requests answered", ["method", "route", "status"], registry=self.registry
        )
        self.http_seconds = Histogram(
            "escalated_http_request_seconds",
            "HTTP request latency",
            ["route"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0),
        )
        self.escalations_created = Counter(
            "escalated_escalations_created", "Escalations created", registry=self.registry
        )
        self.escalations_resolved = Counter(
            "escalated_escalations_resolved", "Escalations resolved", ["resolved_by"], registry=self.registry
        )
        self.delivery_attempts = Counter(
            "escalated_delivery_attempts", "Delivery attempts", ["kind", "outcome"], registry=self.registry
        )
        self.deliveries_failed = Gauge(
            "escalated_deliveries_failed", "Deliveries that exhausted their retries", registry=self.registry
        )
        self.deliveries_pending = Gauge(
            "escalated_deliveries_pending", "Deliveries waiting for an attempt", registry=self.registry
        )
        self.deadlines_armed = Gauge(
            "escalated_deadlines_armed", "SLA deadlines held in memory", registry=self.registry
        )
        # labels() validates the label values and takes a lock on every call;
        # every request is counted, so each (method, route, status) resolves
        # its two children once. Grows like the metrics' own children do.
        self._request_children: dict[_RequestKey, tuple[Counter, Histogram]] = {}

    def request_answered(self, method: str, route: str, status: int, *, duration_s: float) -> None:
        # Clients choose the method name: anything outside the standard set is
        # one label value, or made-up methods would grow the metrics unbounded.
        if method not in _STANDARD_METHODS:
            method = "other"
        key = (method, route, status)
        children = self._request_children.get(key)
        if children is None:
            children = (self.http_requests.labels(method, route, str(status)), self.http_seconds.labels(route))
            self._request_children[key] = children
        counter, histogram = children
        counter.inc()
        histogram.observe(duration_s)
