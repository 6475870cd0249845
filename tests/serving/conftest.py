"""Served-domain tests reuse the domains fixtures (settings, domains built through the service)."""

from tests.domains.conftest import make_domains, settings_overrides

__all__ = ["make_domains", "settings_overrides"]
