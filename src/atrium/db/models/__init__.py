"""Every table of atrium. Importing this package registers them all on `Base.metadata`."""

from atrium.db.models.account import Account, ApiKey
from atrium.db.models.agent import Agent
from atrium.db.models.agent_version import AgentAlias, AgentVersion
from atrium.db.models.domain import Domain, DomainCount
from atrium.db.models.evaluation import Evaluation
from atrium.db.models.file import StoredFile
from atrium.db.models.memory import MemoryChange, MemoryItem, MemoryItemHistory
from atrium.db.models.memory_block import MemoryBlock, MemoryBlockVersion
from atrium.db.models.provider import Provider
from atrium.db.models.run import (
    TERMINAL_EVENT,
    TERMINAL_KINDS,
    TERMINAL_STATUSES,
    Artifact,
    CancelReason,
    EventKind,
    Run,
    RunAction,
    RunEvent,
    RunStatus,
    Thread,
    ThreadSummary,
)
from atrium.db.models.schedule import Schedule, ScheduleFiring
from atrium.db.models.space import Space
from atrium.db.models.usage import AgentUsageDaily
from atrium.db.models.webhook import WebhookDelivery, WebhookEndpoint

__all__ = [
    "TERMINAL_EVENT",
    "TERMINAL_KINDS",
    "TERMINAL_STATUSES",
    "Account",
    "Agent",
    "AgentAlias",
    "AgentUsageDaily",
    "AgentVersion",
    "ApiKey",
    "Artifact",
    "CancelReason",
    "Domain",
    "DomainCount",
    "Evaluation",
    "EventKind",
    "MemoryBlock",
    "MemoryBlockVersion",
    "MemoryChange",
    "MemoryItem",
    "MemoryItemHistory",
    "Provider",
    "Run",
    "RunAction",
    "RunEvent",
    "RunStatus",
    "Schedule",
    "ScheduleFiring",
    "Space",
    "StoredFile",
    "Thread",
    "ThreadSummary",
    "WebhookDelivery",
    "WebhookEndpoint",
]
