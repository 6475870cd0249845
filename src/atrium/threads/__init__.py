"""Threads as resources: create, list, read, fork and delete a conversation, and read its
messages as the model sees them."""
