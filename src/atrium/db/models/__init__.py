"""Every table of atrium. Importing this package registers them all on `Base.metadata`."""

from atrium.db.models.account import Account, ApiKey
from atrium.db.models.agent import Agent

__all__ = ["Account", "Agent", "ApiKey"]
