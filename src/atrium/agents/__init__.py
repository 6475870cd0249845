"""Agents: named model configurations that runs execute (DESIGN §5)."""
