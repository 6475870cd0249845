"""Webhooks: signed notifications of finished runs, sent from a durable outbox."""
