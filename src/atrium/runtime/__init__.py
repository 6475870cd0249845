"""Agent execution with pydantic-ai: models, tools, the offline model, billing."""
