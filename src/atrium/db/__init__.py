"""Storage: engines, sessions, models and migrations."""
