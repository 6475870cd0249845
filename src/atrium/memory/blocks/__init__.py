"""Memory blocks: named, size-limited texts of an account, rendered into the instructions of
every run of the agents they are attached to (docs/decisions/0060-memory-blocks.md)."""
