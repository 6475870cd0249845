"""Served domains: host-based redirects in front of the API."""

from atrium.serving.middleware import ServedDomainsMiddleware

__all__ = ["ServedDomainsMiddleware"]
