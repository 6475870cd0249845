"""Domains: phpShort-compatible CRUD and list under `/api/v1/domains`."""
