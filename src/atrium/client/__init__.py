"""A typed Python client of atrium, blocking (`Client`) and asyncio (`AsyncClient`).

```python
from atrium.client import Client

with Client() as atrium:  # $ATRIUM_URL, $ATRIUM_API_KEY
    run = atrium.runs.create("Summarise the plan")
    for event in atrium.runs.stream(run.run_id):
        ...
```
"""

from atrium.client._async import AsyncClient
from atrium.client._sync import Client
from atrium.client.errors import (
    APIConnectionError,
    APIError,
    AtriumError,
    AuthenticationError,
    ChecksumMismatchError,
    ConfigurationError,
    ConflictError,
    InvalidParameterError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitError,
    ServerError,
    StreamError,
    UnsupportedMediaTypeError,
    WaitTimeoutError,
)
from atrium.client.models import (
    Account,
    Agent,
    AgentConfig,
    Artifact,
    ArtifactCreated,
    Billing,
    DeliveryPage,
    Domain,
    MessageDelta,
    Page,
    Run,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunPage,
    RunQueued,
    RunStarted,
    RunStep,
    Space,
    UsageReport,
    Webhook,
    WebhookDelivery,
)

__all__ = [
    "APIConnectionError",
    "APIError",
    "Account",
    "Agent",
    "AgentConfig",
    "Artifact",
    "ArtifactCreated",
    "AsyncClient",
    "AtriumError",
    "AuthenticationError",
    "Billing",
    "ChecksumMismatchError",
    "Client",
    "ConfigurationError",
    "ConflictError",
    "DeliveryPage",
    "Domain",
    "InvalidParameterError",
    "MessageDelta",
    "MethodNotAllowedError",
    "NotFoundError",
    "Page",
    "PayloadTooLargeError",
    "RateLimitError",
    "Run",
    "RunCancelled",
    "RunCompleted",
    "RunEvent",
    "RunFailed",
    "RunPage",
    "RunQueued",
    "RunStarted",
    "RunStep",
    "ServerError",
    "Space",
    "StreamError",
    "UnsupportedMediaTypeError",
    "UsageReport",
    "WaitTimeoutError",
    "Webhook",
    "WebhookDelivery",
]
