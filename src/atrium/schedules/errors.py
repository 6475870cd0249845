"""The errors of the schedules group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter, NotFound


class ScheduleNotFound(NotFound):
    """The account has no schedule with the id (another account's is as unknown as none)."""

    def __init__(self, schedule_id: str) -> None:
        super().__init__(
            f"no schedule {schedule_id[:64]!r} in this account",
            details={"parameter": "schedule_id"},
        )


class ScheduleLimitReached(InvalidParameter):
    """The account has as many schedules as it may have (`ATRIUM_SCHEDULE_MAX_PER_ACCOUNT`)."""

    def __init__(self, limit: int) -> None:
        super().__init__("cron", f"an account may have at most {limit} schedules")


class ScheduleThreadNotFound(InvalidParameter):
    """`thread` is neither "new" nor a thread of the account."""

    def __init__(self, thread: str) -> None:
        super().__init__(
            "thread",
            f'thread must be "new" or a thread id of this account: no thread {thread[:64]!r}',
        )


class ScheduleAgentNotFound(InvalidParameter):
    """`agent_id` names no agent of the account (or a deleted one)."""

    def __init__(self, agent_id: str) -> None:
        super().__init__("agent_id", f"no agent {agent_id[:64]!r} in this account")


class ScheduleWindowInvalid(InvalidParameter):
    """`ends_at` is not after `starts_at`."""

    def __init__(self) -> None:
        super().__init__("ends_at", "ends_at must be later than starts_at")
