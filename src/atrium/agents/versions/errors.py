"""The errors of agent versions and aliases, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter, NotFound


class VersionNotFound(NotFound):
    """The agent has no version with the number."""

    def __init__(self, agent_id: str, number: int, *, parameter: str = "version") -> None:
        message = f"agent {agent_id} has no version {number}"
        super().__init__(message, details={"parameter": parameter})


class AliasNotFound(NotFound):
    """The agent has no alias with the name."""

    def __init__(self, agent_id: str, name: str) -> None:
        message = f"agent {agent_id} has no alias {name[:64]!r}"  # the name echoed, shortened
        super().__init__(message, details={"parameter": "alias"})


class AliasNameInvalid(InvalidParameter):
    """An alias name is a lower-case letter, then up to 31 lower-case letters, digits, `-` or
    `_` (a number names a version, so it is no alias), and not `v` and a number (`v3` names
    version 3)."""

    def __init__(self, name: str, *, reserved: bool = False) -> None:
        shown = repr(name[:64])
        message = (
            f"alias {shown} names version {name[1:]} (agt_…@{name} is agt_…@{name[1:]}), "
            "so it cannot be an alias: choose another name"
            if reserved
            else f"alias {shown} must be a lower-case letter then up to 31 of a-z, 0-9, - and _"
        )
        super().__init__("alias", message)


class AliasVersionUnknown(InvalidParameter):
    """`version` or `split.version` names no version of the agent, or the split names the
    alias's own version."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(parameter, f"{parameter}: {message}")


class AgentReferenceUnknown(InvalidParameter):
    """`agent_id` is `agt_…@version` or `agt_…@alias` and the agent has no such version or
    alias."""

    def __init__(self, reference: str, problem: str) -> None:
        super().__init__("agent_id", f"agent_id {reference[:100]!r}: {problem}")
