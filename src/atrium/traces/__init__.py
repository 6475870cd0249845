"""A run's spans, built from its stored events: exported over OTLP/HTTP to the operator's own
collector and shown as the dashboard's waterfall (docs/decisions/0055-traces-from-stored-events.md).
"""
