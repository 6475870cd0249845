"""`agt_…@3`, `agt_…@v3` and `agt_…@prod`: the agent version a new run uses.

`read_ref` is the one reading of what follows `@`, for every place that takes an agent
reference (runs, the runs list, schedules, evals through runs).

An alias with a split sends `split.weight` of its runs to `split.version`. The choice is a hash
of the run's id, not a draw: random across runs (ids are random), and the same for the same
run whenever it is worked out again, so a run's version can be checked from its id alone.
"""

from __future__ import annotations

import hashlib
from typing import Final, NoReturn

from sqlalchemy import Connection

from atrium.agents.config import AGENT_ID_PATTERN, stored_config
from atrium.agents.errors import AgentNotFound
from atrium.agents.repository import AgentForRun
from atrium.agents.versions import repository
from atrium.agents.versions.aliases import ALIAS_PATTERN, VERSION_NAME
from atrium.agents.versions.errors import AgentReferenceUnknown
from atrium.agents.versions.repository import AliasTarget
from atrium.db.engine import Database

SEPARATOR: Final = "@"
_MAX_VERSION: Final = 2**31 - 1
MALFORMED: Final = "after @ comes a version number (3 or v3) or an alias name (a-z, 0-9, - and _)"


def read_ref(ref: str) -> int | str | None:
    """What follows `@`: a version number (`3` and `v3` are 3), an alias name (by the alias
    rules, and not `v` and a number), or None for neither (0 and numbers above 2**31 - 1 are
    no version)."""
    digits = ref[1:] if VERSION_NAME.match(ref) else ref
    if digits.isascii() and digits.isdigit():
        number = int(digits) if len(digits) <= 10 else 0
        return number if 1 <= number <= _MAX_VERSION else None
    return ref if ALIAS_PATTERN.match(ref) else None


def split_reference(value: str) -> tuple[str, str | None]:
    """`agt_…@ref` as (agent id, ref); a plain id as (id, None)."""
    agent_id, separator, ref = value.partition(SEPARATOR)
    return agent_id, ref if separator else None


def version_filter(value: str, agent_version: int | None = None) -> tuple[str, int | None] | None:
    """A list's `agent_id` filter with its `agent_version`: `agt_…` keeps the given version,
    `agt_…@3` and `agt_…@v3` ask for version 3. None when no run can match: an alias (a run
    records the version it executed, not the alias it came through), anything else after
    `@`, or a version other than `agent_version`. An empty page, not a 400: the API document
    cannot say so, and a request valid by it is not refused."""
    agent_id, ref = split_reference(value)
    if ref is None:
        return agent_id, agent_version
    number = read_ref(ref)
    if not isinstance(number, int) or agent_version not in (None, number):
        return None
    return agent_id, number


def share_of(run_id: str) -> float:
    """A number in [0, 1) that the run's id fixes: the first 8 bytes of its SHA-256."""
    digest = hashlib.sha256(run_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def chosen_version(target: AliasTarget, run_id: str) -> int:
    """The alias's version, or its split's for a `split_weight` share of run ids."""
    if target.split_version is None or target.split_weight is None:
        return target.version
    return target.split_version if share_of(run_id) < target.split_weight else target.version


def version_named(
    conn: Connection, *, account_id: int, agent_id: str, named: int | str, run_id: str
) -> int | None:
    """The version `named` (what `read_ref` read) gives run `run_id`: the number itself, or
    the alias's version (its split chosen by the run's id); None for an alias the agent lacks."""
    if isinstance(named, int):
        return named
    target = repository.alias_target(conn, account_id=account_id, agent_id=agent_id, name=named)
    return None if target is None else chosen_version(target, run_id)


async def agent_at(db: Database, *, account_id: int, reference: str, run_id: str) -> AgentForRun:
    """The agent `reference` (`agt_…@N`, `agt_…@vN` or `agt_…@alias`) names, with that
    version's config. Point reads. 404 for an unknown agent; 400 on `agent_id` for an unknown
    version or alias."""
    agent_id, ref = split_reference(reference)
    if ref is None or not AGENT_ID_PATTERN.match(agent_id):
        raise AgentNotFound(reference)
    named = read_ref(ref)
    if named is None:
        raise AgentReferenceUnknown(reference, MALFORMED)

    def read(conn: Connection) -> AgentForRun:
        version = version_named(
            conn, account_id=account_id, agent_id=agent_id, named=named, run_id=run_id
        )
        if version is None:
            _unknown(conn, f"the agent has no alias {named!r}")
        config = repository.version_config(
            conn, account_id=account_id, agent_id=agent_id, number=version
        )
        if config is None:
            _unknown(conn, f"the agent has no version {version}")
        return AgentForRun(id=agent_id, config=stored_config(config), version=version)

    def _unknown(conn: Connection, problem: str) -> NoReturn:
        if not repository.agent_exists(conn, account_id=account_id, agent_id=agent_id):
            raise AgentNotFound(agent_id)
        raise AgentReferenceUnknown(reference, problem)

    return await db.point_read(read)
