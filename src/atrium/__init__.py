"""atrium: domains and spaces, durable LLM agent runs, agents and usage analytics."""

__version__ = "0.1.0"
