"""Usage analytics: a per-day, per-agent rollup of finished runs and the usage query over it."""
