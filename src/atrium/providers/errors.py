"""The errors of the providers group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter, NotFound


class ProviderNotFound(NotFound):
    """The account has no provider with the id or name (another account's is as unknown as
    none; a server provider set by `ATRIUM_PROVIDERS` is not the account's)."""

    def __init__(self, key: str, *, server_provider: bool) -> None:
        message = f"no provider {key[:64]!r} in this account"
        if server_provider:
            message += f" ({key} is one of the server's providers, set by ATRIUM_PROVIDERS)"
        super().__init__(message, details={"parameter": "provider"})


class ProviderNameTaken(InvalidParameter):
    """The account has another provider with the name."""

    def __init__(self) -> None:
        super().__init__("name", "name has already been taken")


class ProviderLimitReached(InvalidParameter):
    """The account has as many providers as it may have."""

    def __init__(self, limit: int) -> None:
        super().__init__("name", f"an account may have at most {limit} providers")


class BaseUrlRefused(InvalidParameter):
    """`base_url` is not an address the server may call (docs/guide/models.md)."""

    def __init__(self, reason: str) -> None:
        super().__init__("base_url", f"base_url {reason}")


class SecretsNotResent(InvalidParameter):
    """`base_url` changes and the stored `api_key` or `headers` were neither sent again nor
    removed: a secret never follows the provider to a new address."""

    def __init__(self, parameter: str, *, what: str, empty: str) -> None:
        message = f"{parameter}: send {what} again (or {empty}) when base_url changes"
        super().__init__(parameter, message)
