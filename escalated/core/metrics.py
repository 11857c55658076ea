"""Prometheus metrics, one registry per server so tests do not collide."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

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
        # Counted as it happens, like the other counters: a replica's count
        # restarts at 0 with it, which rate() and increase() read as a reset.
        self.deliveries_failed = Counter(
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
        self._request_children: dict[_RequestKey, _RequestChildren] = {}
        # Counted on every create: prometheus_client's value itself, as for the requests below.
        created: Any = getattr(self.escalations_created, "_value", None)
        self._created_value: Any = created if hasattr(created, "inc") else None

    def escalation_created(self) -> None:
        """``escalations_created.inc()``, without its checks when its value is at hand."""
        if self._created_value is None:
            self.escalations_created.inc()
        else:
            self._created_value.inc(1)

    def request_answered(self, method: str, route: str, status: int, *, duration_s: float) -> None:
        # Clients choose the method name: anything outside the standard set is
        # one label value, or made-up methods would grow the metrics unbounded.
        if method not in _STANDARD_METHODS:
            method = "other"
        key = (method, route, status)
        children = self._request_children.get(key)
        if children is None:
            children = _RequestChildren(self.http_requests.labels(method, route, str(status)), self.http_seconds.labels(route))
            self._request_children[key] = children
        children.observe(duration_s)


class _RequestChildren:
    """One (method, route, status)'s counter and its route's histogram.

    Every request is counted, and ``Counter.inc`` plus ``Histogram.observe``
    (checks, then a walk over the buckets) cost more than the values they
    change: when the children hold prometheus_client's values as expected,
    the same values are changed directly (the count, the sum, the one bucket
    whose bound is the first at or above the duration); otherwise through
    the public calls. Either way ``/metrics`` reads the same."""

    __slots__ = ("_bounds", "_buckets", "_count", "_counter", "_histogram", "_sum")

    def __init__(self, counter: Counter, histogram: Histogram) -> None:
        self._counter, self._histogram = counter, histogram
        count: Any = getattr(counter, "_value", None)
        total: Any = getattr(histogram, "_sum", None)
        buckets: Any = getattr(histogram, "_buckets", None)
        bounds: Any = getattr(histogram, "_upper_bounds", None)
        direct = (
            isinstance(buckets, list)
            and isinstance(bounds, list)
            and all(hasattr(v, "inc") for v in (count, total, *buckets))
            and len(bounds) == len(buckets)
            and bounds == sorted(bounds)
            and bounds[-1] == float("inf")
        )
        self._count: Any = count if direct else None
        self._sum: Any = total if direct else None
        self._buckets: Any = buckets if direct else None
        self._bounds: Any = bounds if direct else None

    def observe(self, duration_s: float) -> None:
        if self._buckets is None:
            self._counter.inc()
            self._histogram.observe(duration_s)
            return
        self._count.inc(1)
        self._sum.inc(duration_s)
        self._buckets[bisect_left(self._bounds, duration_s)].inc(1)
