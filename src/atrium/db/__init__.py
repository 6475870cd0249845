"""Storage: engines, sessions, models and migrations; the process's Redis client."""
