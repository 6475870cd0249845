"""Agents: named model configurations that runs execute (docs/design.md#agents)."""
