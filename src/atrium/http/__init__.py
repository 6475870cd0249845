"""The HTTP edge: API groups, middleware, error handlers, shared dependencies."""
