"""Memory: JSON items an account keeps across threads, searchable, with who wrote each."""
