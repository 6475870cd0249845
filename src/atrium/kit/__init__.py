"""Small generic pieces every layer above may use: ids, time, keyset cursors, JSON depth,
file names, header rules, wire schemas, JSON Schema validators, waiting on an event."""
