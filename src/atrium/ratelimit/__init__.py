"""Per-key, per-group rate limits on the `limits` library (memory or Redis counters)."""
