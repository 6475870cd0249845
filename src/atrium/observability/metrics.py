"""Prometheus metrics of the process. Labels carry route templates, never account data."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram


class Metrics:
    """One registry per app instance, so several apps in one process (tests) stay separate."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "atrium_http_requests_total",
            "HTTP requests by route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "atrium_http_request_duration_seconds",
            "Time to the response's first byte.",
            ["method", "route"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.retention_deleted = Counter(
            "atrium_retention_deleted_rows_total",
            "Rows deleted by retention (ATRIUM_RETENTION_DAYS) in this process, by table.",
            ["table"],
            registry=self.registry,
        )
