"""Small shared pieces: ids, time, pagination and listing parameters."""
