"""Request ids, access logging and Prometheus metrics."""
