"""Run events: their one shape (`shapes`, handed on here), their storage (`event_store`), their
fan-out to readers (`broker`) and the SSE stream (`stream`)."""

from atrium.runs.events.shapes import event_message, event_row, stored_event_message

__all__ = ["event_message", "event_row", "stored_event_message"]
