"""`agt_…@3` and `agt_…@prod`: the agent version a new run uses.

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
from atrium.agents.versions.aliases import ALIAS_PATTERN
from atrium.agents.versions.errors import AgentReferenceUnknown
from atrium.agents.versions.repository import AliasTarget
from atrium.db.engine import Database

SEPARATOR: Final = "@"
_MAX_VERSION: Final = 2**31 - 1


def split_reference(value: str) -> tuple[str, str | None]:
    """`agt_…@ref` as (agent id, ref); a plain id as (id, None)."""
    agent_id, separator, ref = value.partition(SEPARATOR)
    return agent_id, ref if separator else None


def share_of(run_id: str) -> float:
    """A number in [0, 1) that the run's id fixes: the first 8 bytes of its SHA-256."""
    digest = hashlib.sha256(run_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def chosen_version(target: AliasTarget, run_id: str) -> int:
    """The alias's version, or its split's for a `split_weight` share of run ids."""
    if target.split_version is None or target.split_weight is None:
        return target.version
    return target.split_version if share_of(run_id) < target.split_weight else target.version


def version_number(ref: str) -> int | None:
    """The version `ref` names (`3`), or None when it is no version number (an alias)."""
    if ref.isascii() and ref.isdigit() and len(ref) <= 10:
        number = int(ref)
        return number if 1 <= number <= _MAX_VERSION else None
    return None


async def agent_at(db: Database, *, account_id: int, reference: str, run_id: str) -> AgentForRun:
    """The agent `reference` (`agt_…@N` or `agt_…@alias`) names, with that version's config.
    Point reads. 404 for an unknown agent; 400 on `agent_id` for an unknown version or alias."""
    agent_id, ref = split_reference(reference)
    if ref is None or not AGENT_ID_PATTERN.match(agent_id):
        raise AgentNotFound(reference)
    number = version_number(ref)
    if number is None and not ALIAS_PATTERN.match(ref):
        raise AgentReferenceUnknown(
            reference, "after @ comes a version number or an alias name (a-z, 0-9, - and _)"
        )

    name = ref

    def read(conn: Connection) -> AgentForRun:
        version = number
        if version is None:
            target = repository.alias_target(
                conn, account_id=account_id, agent_id=agent_id, name=name
            )
            if target is None:
                _unknown(conn, f"the agent has no alias {name!r}")
            version = chosen_version(target, run_id)
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
